// Desktop smoke test: the real Tauri window through tauri-driver + WebKitWebDriver.
// DRAFT. Builds nothing: needs target/debug/crosscheck-desktop built with
// `--features tauri/custom-protocol` (else it loads the dev server), tauri-driver
// (cargo install tauri-driver --locked) and a DISPLAY (the Makefile runs this under xvfb-run).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { SCREENSHOT_DIR } from '../support/browser.mjs';
import { makeTempDir } from '../support/cleanup.mjs';
import { builtBinary } from '../support/crosscheck.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';
import { newSession, startTauriDriver, tauriCapabilities } from '../support/webdriver.mjs';

const PASSWORD = 'desktop-secret';
const TITLE = 'Desktop smoke session';
const bin = builtBinary('crosscheck-desktop', 'CROSSCHECK_DESKTOP_BIN');

// Missing prerequisites fail loudly (a silent skip would hide a broken desktop route in CI),
// unless CROSSCHECK_SKIP_DESKTOP is set.
const missing = !process.env.DISPLAY
  ? 'no DISPLAY (run under xvfb-run -a)'
  : !fs.existsSync(bin) ? `desktop binary not built at ${bin} (cargo build -p crosscheck-desktop --features tauri/custom-protocol)` : null;
const skip = missing && process.env.CROSSCHECK_SKIP_DESKTOP ? missing : false;

let ms;
let oc;
let driver;
let wd;

before(async () => {
  if (skip) return;
  if (missing) throw new Error(`desktop smoke test cannot run: ${missing}`);
  ms = await startModelServer();
  oc = await startOpencode({ modelUrl: ms.url, password: PASSWORD });
  await oc.json('/session', { method: 'POST', body: { title: TITLE } });
  const appDir = makeTempDir('crosscheck-desktop-');
  // tauri-driver hands its environment to the app it launches.
  driver = await startTauriDriver({
    env: {
      CROSSCHECK_OPENCODE_URL: oc.url,
      OPENCODE_SERVER_PASSWORD: PASSWORD,
      CROSSCHECK_DATA_DIR: path.join(appDir, 'data'),
      CROSSCHECK_CONFIG_DIR: path.join(appDir, 'config'),
    },
  });
});

after(async () => {
  await wd?.deleteSession();
  await driver?.stop();
  await oc?.dispose();
  await ms?.close();
});

/** Polls a script in the window until it returns a truthy value. */
async function waitForScript(script, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await wd.executeScript(script);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('the desktop window lists the server\'s sessions and streams a reply over IPC', { skip }, async () => {
  wd = await newSession(tauriCapabilities(bin), { url: driver.url });
  // WebKitWebDriver's element text skips some nested nodes; read textContent in the page instead.
  await waitForScript(
    `return [...document.querySelectorAll('[data-testid="session-item"]')].some((e) => e.textContent.includes(${JSON.stringify(TITLE)}))`,
    'the session in the sidebar',
  );
  await wd.executeScript(
    `[...document.querySelectorAll('[data-testid="session-item"]')].find((e) => e.textContent.includes(${JSON.stringify(TITLE)})).querySelector('button.main').click()`,
  );
  const input = await wd.waitForElement('[data-testid="composer-input"]', { timeoutMs: 30_000 });
  const prompt = 'Hello from the desktop window';
  await wd.sendKeys(input, prompt);
  await wd.sendKeys(input, '\uE007'); // Enter
  const reply = await waitForScript(
    `const m = [...document.querySelectorAll('[data-testid="message-assistant"]')].map((e) => e.textContent).find((t) => t.includes('FAKE-REPLY'));
     return m || null;`,
    'the streamed reply',
    60_000,
  );
  assert.match(reply, /FAKE-REPLY: Hello from the desktop window/);
  assert.equal(ms.chatRequests().at(-1).lastUserText, prompt);
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, 'desktop.png');
  const png = await wd.screenshot(file);
  assert.ok(png.length > 1000, 'screenshot has content');
});
