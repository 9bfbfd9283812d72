# Crosscheck: `make run` starts the app, `make test` runs every test. Both install what they
# need on a fresh Debian machine first (system packages with sudo when not root).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# Build caches live outside the clone so a fresh clone on the same machine reuses them.
export CARGO_TARGET_DIR ?= $(HOME)/.cache/crosscheck/target
export CARGO_TERM_COLOR ?= never
CARGO ?= cargo
BIN_DIR := $(CARGO_TARGET_DIR)/debug
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# The pinned OpenCode `make opencode` installs: what `make run` and `make serve` start unless
# CROSSCHECK_OPENCODE_BIN names another (the app itself never looks in the working folder).
PINNED_OPENCODE := $(CURDIR)/tests/node_modules/opencode-linux-x64/bin/opencode

# What the app and its tests need from Debian (see docs/development.md).
APT_PACKAGES := build-essential pkg-config curl file libssl-dev libwebkit2gtk-4.1-dev \
  libjavascriptcoregtk-4.1-dev libsoup-3.0-dev libgtk-3-dev libayatana-appindicator3-dev \
  librsvg2-dev libxdo-dev xvfb xauth webkit2gtk-driver fonts-dejavu-core chromium

.PHONY: help deps ui opencode build desktop run serve test test-rust test-ui test-e2e test-desktop lint bench deb clean soak

help:
	@echo "make run    build and start Crosscheck (desktop window, or web mode without a display)"
	@echo "make test   install what the tests need and run every test"
	@echo "make bench  print the benchmark figures"
	@echo "make soak   30 minutes of scripted traffic and OpenCode restarts (SOAK_MINUTES=3 for less)"
	@echo "make deb    build the .deb package"

deps:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing system packages: $$missing"; \
	  $(SUDO) apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@command -v npm >/dev/null || { echo "Installing Node.js and npm"; DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq nodejs npm; }
	@command -v cargo >/dev/null || { echo "cargo is missing: install Rust (rustup) first"; exit 1; }

ui/node_modules/.installed: ui/package-lock.json
	cd ui && npm ci --no-audit --no-fund
	touch $@

ui: deps ui/node_modules/.installed
	cd ui && npm run build

# The pinned OpenCode server (and the end-to-end test tools) live in tests/node_modules.
# `npm ci` refuses this lock: it lists only the OpenCode platform packages the registry serves
# here, and npm ci wants every optional one. `npm install --no-save` installs the locked versions.
tests/node_modules/.installed: tests/package-lock.json
	cd tests && npm install --no-audit --no-fund --no-save
	touch $@

opencode: deps tests/node_modules/.installed

build: deps
	$(CARGO) build --workspace --exclude crosscheck-desktop

desktop: ui
	$(CARGO) build -p crosscheck-desktop --features custom-protocol

run: ui opencode build desktop
	@if [ -n "$${DISPLAY:-}$${WAYLAND_DISPLAY:-}" ]; then \
	  echo "Starting the Crosscheck window"; \
	  CROSSCHECK_OPENCODE_BIN="$${CROSSCHECK_OPENCODE_BIN:-$(PINNED_OPENCODE)}" exec "$(BIN_DIR)/crosscheck-desktop"; \
	else \
	  echo "No display: starting web mode; open the URL below in a browser."; \
	  CROSSCHECK_OPENCODE_BIN="$${CROSSCHECK_OPENCODE_BIN:-$(PINNED_OPENCODE)}" exec "$(BIN_DIR)/crosscheck" serve --ui-dir ui/dist; \
	fi

serve: ui opencode build
	CROSSCHECK_OPENCODE_BIN="$${CROSSCHECK_OPENCODE_BIN:-$(PINNED_OPENCODE)}" exec "$(BIN_DIR)/crosscheck" serve --ui-dir ui/dist

# Not part of `make test`: scripted traffic against the real OpenCode for SOAK_MINUTES (30).
soak: ui opencode build
	cd tests && CROSSCHECK_BIN="$(BIN_DIR)/crosscheck" node soak/soak.mjs

lint: ui
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	cd ui && npm run check

test-rust: build opencode
	$(CARGO) test --workspace --exclude crosscheck-desktop
	@# ts-rs regenerates the UI's types during the tests: the committed ones must be current.
	@if git rev-parse --git-dir >/dev/null 2>&1 && [ -n "$$(git status --porcelain -- ui/src/lib/types)" ]; then \
	  echo "ui/src/lib/types is out of date with the Rust types: commit the regenerated files"; git status --short -- ui/src/lib/types; exit 1; fi

test-ui: ui
	cd ui && npm test

test-e2e: ui opencode build
	cd tests && CROSSCHECK_BIN="$(BIN_DIR)/crosscheck" npm run --silent test:e2e

test-desktop: desktop opencode
	@command -v tauri-driver >/dev/null || $(CARGO) install tauri-driver --locked
	cd tests && CROSSCHECK_DESKTOP_BIN="$(BIN_DIR)/crosscheck-desktop" xvfb-run -a --server-args="-screen 0 1280x820x24" npm run --silent test:desktop

test: lint test-rust test-ui test-e2e test-desktop
	@echo "All suites passed."

bench: ui opencode
	$(CARGO) build --release -p crosscheck-cli --bins --examples
	$(CARGO) build --release -p crosscheck-core --example stream_bench --example older_pages_bench
	$(CARGO) build --release -p crosscheck-opencode --example parse_bench
	"$(CARGO_TARGET_DIR)/release/examples/parse_bench"
	"$(CARGO_TARGET_DIR)/release/examples/gate_overhead" "$(CARGO_TARGET_DIR)/release/crosscheck" 50
	"$(CARGO_TARGET_DIR)/release/examples/older_pages_bench"
	cd tests && CROSSCHECK_STREAM_BENCH="$(CARGO_TARGET_DIR)/release/examples/stream_bench" node bench/event-stream.bench.mjs 200000
	cd tests && node bench/first-frame.bench.mjs 5
	cd tests && CROSSCHECK_BIN="$(CARGO_TARGET_DIR)/release/crosscheck" node bench/handoff.bench.mjs 20

deb: ui
	ui/node_modules/.bin/tauri build --bundles deb
	@ls "$(CARGO_TARGET_DIR)"/release/bundle/deb/*.deb

clean:
	rm -rf ui/dist ui/node_modules tests/node_modules
	$(CARGO) clean
