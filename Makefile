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
  librsvg2-dev libxdo-dev xvfb xauth webkit2gtk-driver fonts-dejavu-core chromium \
  dbus gnome-keyring x11-utils

.PHONY: help deps ui opencode build desktop run serve test test-rust test-ui test-e2e test-desktop test-install lint bench deb install screenshots clean soak

# `make install` puts `crosscheck` and the desktop app under PREFIX (bin/, share/applications/,
# share/icons/); PROFILE=debug installs the debug build instead of building a release.
PREFIX ?= $(HOME)/.local
PROFILE ?= release
CARGO_PROFILE_FLAG := $(if $(filter release,$(PROFILE)),--release,)
# Screenshots the end-to-end and desktop tests take land here (git-ignored); `make screenshots`
# writes them to docs/screenshots/ instead.
export CROSSCHECK_SCREENSHOT_DIR ?= $(CURDIR)/tests/.run/screenshots

help:
	@echo "make run    build and start Crosscheck (desktop window, or web mode without a display)"
	@echo "make test   install what the tests need and run every test"
	@echo "make bench  print the benchmark figures"
	@echo "make soak   30 minutes of scripted traffic and OpenCode restarts (SOAK_MINUTES=3 for less)"
	@echo "make install  install crosscheck and the desktop app under PREFIX (default ~/.local)"
	@echo "make deb    build the .deb package (crosscheck and the desktop app)"
	@echo "make screenshots  run the end-to-end and desktop tests, writing docs/screenshots/"

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

# Rebuilt only when a source is newer than the build, so targets that need the UI (and the
# crates that embed it) do not rebuild it each time.
UI_SOURCES := $(shell find ui/src ui/public -type f 2>/dev/null) ui/index.html ui/package.json \
  ui/vite.config.ts ui/svelte.config.js ui/tsconfig.json
ui/dist/index.html: ui/node_modules/.installed $(UI_SOURCES)
	cd ui && npm run build

ui: deps ui/dist/index.html

# The pinned OpenCode server (and the end-to-end test tools) live in tests/node_modules.
# `npm ci` refuses this lock: it lists only the OpenCode platform packages the registry serves
# here, and npm ci wants every optional one. `npm install --no-save` installs the locked versions.
tests/node_modules/.installed: tests/package-lock.json
	cd tests && npm install --no-audit --no-fund --no-save
	touch $@

opencode: deps tests/node_modules/.installed

# The UI is built first: the `crosscheck` binary embeds it (crates/web/build.rs).
build: deps ui
	$(CARGO) build --workspace --exclude crosscheck-desktop

desktop: ui
	$(CARGO) build -p crosscheck-desktop --features custom-protocol

run: ui opencode build desktop
	@if [ -n "$${DISPLAY:-}$${WAYLAND_DISPLAY:-}" ]; then \
	  echo "Starting the Crosscheck window"; \
	  CROSSCHECK_OPENCODE_BIN="$${CROSSCHECK_OPENCODE_BIN:-$(PINNED_OPENCODE)}" exec "$(BIN_DIR)/crosscheck-desktop"; \
	else \
	  echo "No display: starting web mode; open the URL below in a browser."; \
	  CROSSCHECK_OPENCODE_BIN="$${CROSSCHECK_OPENCODE_BIN:-$(PINNED_OPENCODE)}" exec "$(BIN_DIR)/crosscheck" serve; \
	fi

serve: ui opencode build
	CROSSCHECK_OPENCODE_BIN="$${CROSSCHECK_OPENCODE_BIN:-$(PINNED_OPENCODE)}" exec "$(BIN_DIR)/crosscheck" serve

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

# From a folder outside the clone: the built binary serves its embedded UI, and
# `make install PREFIX=<tmp> PROFILE=debug` (reusing the debug build) gives a working install.
test-install: build desktop
	cd tests && CROSSCHECK_BIN="$(BIN_DIR)/crosscheck" npm run --silent test:install

test: lint test-rust test-ui test-e2e test-desktop test-install
	@echo "All suites passed."

bench: ui opencode
	$(CARGO) build --release -p crosscheck-cli --bins --examples
	$(CARGO) build --release -p crosscheck-core --example stream_bench --example older_pages_bench --example search_bench
	$(CARGO) build --release -p crosscheck-opencode --example parse_bench
	$(CARGO) build --release -p crosscheck-desktop --features custom-protocol
	"$(CARGO_TARGET_DIR)/release/examples/parse_bench"
	"$(CARGO_TARGET_DIR)/release/examples/gate_overhead" "$(CARGO_TARGET_DIR)/release/crosscheck" 50
	"$(CARGO_TARGET_DIR)/release/examples/older_pages_bench"
	"$(CARGO_TARGET_DIR)/release/examples/search_bench"
	cd tests && CROSSCHECK_STREAM_BENCH="$(CARGO_TARGET_DIR)/release/examples/stream_bench" node bench/event-stream.bench.mjs 200000
	cd tests && node bench/first-frame.bench.mjs 5
	cd tests && CROSSCHECK_BIN="$(CARGO_TARGET_DIR)/release/crosscheck" node bench/handoff.bench.mjs 20
	cd tests && CROSSCHECK_BIN="$(CARGO_TARGET_DIR)/release/crosscheck" node bench/review-loop.bench.mjs 50
	cd tests && CROSSCHECK_DESKTOP_BIN="$(CARGO_TARGET_DIR)/release/crosscheck-desktop" xvfb-run -a node bench/desktop-memory.bench.mjs 5000
	cd tests && CROSSCHECK_BIN="$(CARGO_TARGET_DIR)/release/crosscheck" node bench/servers.bench.mjs 300 20
	cd tests && CROSSCHECK_BIN="$(CARGO_TARGET_DIR)/release/crosscheck" node bench/attention.bench.mjs 100 40

# The .deb holds the desktop app (with its desktop entry and icons) and the `crosscheck`
# command, both release builds; nothing is downloaded (deb only: AppImage would fetch a tool).
deb: ui
	$(CARGO) build --release -p crosscheck-cli
	ui/node_modules/.bin/tauri build --bundles deb --config \
	  '{"bundle":{"linux":{"deb":{"files":{"/usr/bin/crosscheck":"$(CARGO_TARGET_DIR)/release/crosscheck"}}}}}'
	@deb=$$(ls -t "$(CARGO_TARGET_DIR)"/release/bundle/deb/*.deb | head -n 1); echo "Built $$deb"; \
	  cd tests && CROSSCHECK_DEB="$$deb" node --test package/

install: ui
	$(CARGO) build $(CARGO_PROFILE_FLAG) -p crosscheck-cli
	$(CARGO) build $(CARGO_PROFILE_FLAG) -p crosscheck-desktop --features custom-protocol
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/applications"
	install -m 755 "$(CARGO_TARGET_DIR)/$(PROFILE)/crosscheck" "$(DESTDIR)$(PREFIX)/bin/crosscheck"
	install -m 755 "$(CARGO_TARGET_DIR)/$(PROFILE)/crosscheck-desktop" "$(DESTDIR)$(PREFIX)/bin/crosscheck-desktop"
	install -D -m 644 icons/32x32.png "$(DESTDIR)$(PREFIX)/share/icons/hicolor/32x32/apps/crosscheck.png"
	install -D -m 644 icons/128x128.png "$(DESTDIR)$(PREFIX)/share/icons/hicolor/128x128/apps/crosscheck.png"
	install -D -m 644 icons/128x128@2x.png "$(DESTDIR)$(PREFIX)/share/icons/hicolor/256x256/apps/crosscheck.png"
	sed 's|@BIN@|$(PREFIX)/bin|' icons/crosscheck.desktop.in > "$(DESTDIR)$(PREFIX)/share/applications/crosscheck-desktop.desktop"
	@echo "Installed $(PREFIX)/bin/crosscheck and $(PREFIX)/bin/crosscheck-desktop"
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo "Note: $(PREFIX)/bin is not on PATH; add it, or run $(PREFIX)/bin/crosscheck";; esac

# Refreshes the screenshots in docs/screenshots/ (commit only those you opened and checked).
screenshots:
	$(MAKE) test-e2e test-desktop CROSSCHECK_SCREENSHOT_DIR="$(CURDIR)/docs/screenshots"

clean:
	rm -rf ui/dist ui/node_modules tests/node_modules
	$(CARGO) clean
