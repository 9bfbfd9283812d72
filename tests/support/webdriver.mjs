// A minimal W3C WebDriver client over Node's fetch (keep-alive: never sends Connection: close,
// which makes tauri-driver drop connections at random), a launcher for tauri-driver, and the
// start-up the desktop tests share (`startDesktop`).

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeTempDir, onCleanup, stopChild, trackChild } from './cleanup.mjs';
import { builtBinary } from './crosscheck.mjs';
import { startModelServer } from './model-server.mjs';
import { freePort, startOpencode } from './opencode.mjs';

/** The W3C web element identifier key. */
const ELEMENT = 'element-6066-11e4-a52e-4f735466cecf';

export class WebDriverError extends Error {
  constructor(method, path, status, value) {
    super(`WebDriver ${method} ${path} -> ${status}: ${value?.error ?? ''} ${value?.message ?? JSON.stringify(value)}`);
    this.status = status;
    this.error = value?.error;
  }
}

async function call(base, method, p, body) {
  const res = await fetch(base + p, {
    method,
    headers: body !== undefined ? { 'content-type': 'application/json; charset=utf-8' } : {},
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let json;
  try { json = text ? JSON.parse(text) : {}; } catch { json = { value: text }; }
  if (!res.ok) throw new WebDriverError(method, p, res.status, json.value);
  return json.value;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Create a session. `capabilities` is the W3C body's `capabilities`, e.g.
 * `{alwaysMatch: {'tauri:options': {application: BIN}}}` (see tauriCapabilities()).
 */
export async function newSession(capabilities, { url = 'http://127.0.0.1:4444' } = {}) {
  const base = url.replace(/\/+$/, '');
  const value = await call(base, 'POST', '/session', { capabilities });
  const id = value.sessionId;
  const s = `/session/${id}`;
  const elementId = (v) => v[ELEMENT] ?? Object.values(v)[0];

  const session = {
    id,
    capabilities: value.capabilities,
    raw: (method, p, body) => call(base, method, s + p, body),
    /** First element matching a CSS selector (throws WebDriverError "no such element"). */
    async findElement(css) {
      return elementId(await call(base, 'POST', `${s}/element`, { using: 'css selector', value: css }));
    },
    async findElements(css) {
      return (await call(base, 'POST', `${s}/elements`, { using: 'css selector', value: css })).map(elementId);
    },
    /** Poll until an element matches (and optionally its text satisfies `text`). */
    async waitForElement(css, { timeoutMs = 20_000, text } = {}) {
      const deadline = Date.now() + timeoutMs;
      let last;
      while (Date.now() < deadline) {
        try {
          for (const el of await session.findElements(css)) {
            if (!text) return el;
            const t = await session.getText(el);
            if (typeof text === 'string' ? t.includes(text) : text.test(t)) return el;
            last = t;
          }
        } catch (err) { last = err.message; }
        await sleep(200);
      }
      throw new Error(`no element ${css}${text ? ` with text ${text}` : ''} within ${timeoutMs} ms (last: ${last})`);
    },
    click: (el) => call(base, 'POST', `${s}/element/${el}/click`, {}),
    getText: (el) => call(base, 'GET', `${s}/element/${el}/text`),
    getAttribute: (el, name) => call(base, 'GET', `${s}/element/${el}/attribute/${encodeURIComponent(name)}`),
    sendKeys: (el, text) => call(base, 'POST', `${s}/element/${el}/value`, { text }),
    executeScript: (script, args = []) => call(base, 'POST', `${s}/execute/sync`, { script, args }),
    executeAsyncScript: (script, args = []) => call(base, 'POST', `${s}/execute/async`, { script, args }),
    getTitle: () => call(base, 'GET', `${s}/title`),
    getUrl: () => call(base, 'GET', `${s}/url`),
    /** Full-window screenshot (element screenshots come back black under WebKitGTK). */
    async screenshot(file) {
      // Two animation frames first, so the window shows what the last action changed.
      await session.executeAsyncScript(
        'const done = arguments[arguments.length - 1]; requestAnimationFrame(() => requestAnimationFrame(() => done(true)));',
      ).catch(() => {});
      const png = Buffer.from(await call(base, 'GET', `${s}/screenshot`), 'base64');
      if (file) {
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, png);
      }
      return png;
    },
    async deleteSession() {
      await call(base, 'DELETE', s).catch(() => {});
    },
  };
  return session;
}

/** The capabilities body for a Tauri app binary (`args`: extra command-line arguments). */
export function tauriCapabilities(application, { args } = {}) {
  return { alwaysMatch: { 'tauri:options': { application, ...(args ? { args } : {}) } } };
}

function findTauriDriver() {
  if (process.env.TAURI_DRIVER) return process.env.TAURI_DRIVER;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const p = path.join(dir, 'tauri-driver');
    if (dir && fs.existsSync(p)) return p;
  }
  const cargoBin = path.join(process.env.CARGO_HOME ?? path.join(os.homedir(), '.cargo'), 'bin', 'tauri-driver');
  if (fs.existsSync(cargoBin)) return cargoBin;
  throw new Error('tauri-driver not found on PATH or in ~/.cargo/bin (cargo install tauri-driver --locked)');
}

/**
 * Spawn tauri-driver on 127.0.0.1:`port` with WebKitWebDriver as native driver and wait for
 * `GET /status`. The app it launches inherits this process's environment plus `env`: set the
 * app's variables (CROSSCHECK_OPENCODE_URL, ...) here. Needs a DISPLAY (run under xvfb-run).
 * @returns {Promise<{url: string, pid: number, output: () => string, stop: () => Promise<void>}>}
 */
export async function startTauriDriver({
  port = 4444, nativePort, nativeDriver = process.env.WEBKIT_WEBDRIVER || '/usr/bin/WebKitWebDriver',
  env = {}, timeoutMs = 20_000,
} = {}) {
  const exe = findTauriDriver();
  const args = ['--port', String(port), '--native-driver', nativeDriver];
  if (nativePort) args.push('--native-port', String(nativePort));
  const child = spawn(exe, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  trackChild(child.pid, 'tauri-driver');
  let out = '';
  const keep = (s) => { out = (out + s).slice(-16384); };
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  let exited = null;
  child.once('exit', (code, signal) => { exited = { code, signal }; });

  const stop = async () => { unregister(); await stopChild(child, { graceMs: 5000 }); };
  const unregister = onCleanup(stop);

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !exited) {
    try {
      const res = await fetch(`${url}/status`, { signal: AbortSignal.timeout(2000) });
      await res.text();
      if (res.ok) return { url, pid: child.pid, output: () => out, stop };
    } catch { /* not up yet */ }
    await sleep(150);
  }
  await stop();
  throw new Error(`tauri-driver did not answer /status on ${url} ${exited ? `(exited ${JSON.stringify(exited)})` : `within ${timeoutMs} ms`}\n${out}`);
}

/**
 * The desktop app binary and why the desktop tests cannot run here: `missing` names what is
 * absent (no DISPLAY, the binary not built), `skip` is that reason only when
 * CROSSCHECK_SKIP_DESKTOP is set, so a missing prerequisite fails loudly otherwise (a silent
 * skip would hide a broken desktop route in CI).
 * @returns {{bin: string, missing: string | null, skip: string | false}}
 */
export function desktopPrerequisites() {
  const bin = builtBinary('crosscheck-desktop', 'CROSSCHECK_DESKTOP_BIN');
  const missing = !process.env.DISPLAY
    ? 'no DISPLAY (run under xvfb-run -a)'
    : !fs.existsSync(bin) ? `desktop binary not built at ${bin} (make desktop)` : null;
  return { bin, missing, skip: missing && process.env.CROSSCHECK_SKIP_DESKTOP ? missing : false };
}

/**
 * Starts what a test of the desktop window connected to a server needs: the scripted model
 * server, `opencode serve` with one session titled `title`, and tauri-driver (on free ports)
 * whose app connects to that server with data and config folders of its own under a new temp
 * folder. `env` adds to the app's environment (`appDir` is that temp folder, for files a test
 * puts beside it). `open()` starts the WebDriver session (the window) and `stop()` ends all.
 * @param {{title: string, password: string, prefix?: string, env?: (appDir: string) => Record<string,string>}} opts
 */
export async function startDesktop({ title, password, prefix = 'crosscheck-desktop-', env = () => ({}) }) {
  const { bin } = desktopPrerequisites();
  const ms = await startModelServer();
  const oc = await startOpencode({ modelUrl: ms.url, password });
  await oc.json('/session', { method: 'POST', body: { title } });
  const appDir = makeTempDir(prefix);
  // tauri-driver hands its environment to the app it launches.
  const driver = await startTauriDriver({
    port: await freePort(),
    nativePort: await freePort(),
    env: {
      CROSSCHECK_OPENCODE_URL: oc.url,
      OPENCODE_SERVER_PASSWORD: password,
      CROSSCHECK_DATA_DIR: path.join(appDir, 'data'),
      CROSSCHECK_CONFIG_DIR: path.join(appDir, 'config'),
      ...env(appDir),
    },
  });
  let wd = null;
  return {
    ms,
    oc,
    driver,
    appDir,
    /** Opens the window (a WebDriver session) and returns it. */
    async open() {
      wd = await newSession(tauriCapabilities(bin), { url: driver.url });
      return wd;
    },
    async stop() {
      await wd?.deleteSession();
      await driver.stop();
      await oc.dispose();
      await ms.close();
    },
  };
}

/** Polls a script in the window until it returns a truthy value. */
export async function waitForScript(wd, script, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await wd.executeScript(script);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(200);
  }
}

/** Waits for the session titled `title` in the sidebar and selects it. */
export async function openSessionTitled(wd, title) {
  await waitForScript(
    wd,
    `return [...document.querySelectorAll('[data-testid="session-item"]')].some((e) => e.textContent.includes(${JSON.stringify(title)}))`,
    'the session in the sidebar',
  );
  await wd.executeScript(
    `[...document.querySelectorAll('[data-testid="session-item"]')].find((e) => e.textContent.includes(${JSON.stringify(title)})).querySelector('button.main').click()`,
  );
}
