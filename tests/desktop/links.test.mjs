// A link in a reply opens in the system browser: the desktop window hands it to the opener
// plugin, which on Linux runs `xdg-open URL`. An `xdg-open` first on the app's PATH writes the
// URL it was given to a file, so the test sees the system opener called with the link.
// Runs the real window through tauri-driver under Xvfb, like smoke.test.mjs.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { makeTempDir } from '../support/cleanup.mjs';
import { builtBinary } from '../support/crosscheck.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { freePort, startOpencode } from '../support/opencode.mjs';
import { newSession, startTauriDriver, tauriCapabilities } from '../support/webdriver.mjs';

const PASSWORD = 'desktop-links-secret';
const TITLE = 'Desktop link session';
const LINK = 'https://example.com/crosscheck-link?from=reply';
const bin = builtBinary('crosscheck-desktop', 'CROSSCHECK_DESKTOP_BIN');

const missing = !process.env.DISPLAY
  ? 'no DISPLAY (run under xvfb-run -a)'
  : !fs.existsSync(bin) ? `desktop binary not built at ${bin} (make desktop)` : null;
const skip = missing && process.env.CROSSCHECK_SKIP_DESKTOP ? missing : false;

let ms;
let oc;
let driver;
let wd;
let opened;

before(async () => {
  if (skip) return;
  if (missing) throw new Error(`desktop link test cannot run: ${missing}`);
  ms = await startModelServer();
  oc = await startOpencode({ modelUrl: ms.url, password: PASSWORD });
  await oc.json('/session', { method: 'POST', body: { title: TITLE } });
  const appDir = makeTempDir('crosscheck-desktop-links-');
  const binDir = path.join(appDir, 'bin');
  opened = path.join(appDir, 'opened.txt');
  fs.mkdirSync(binDir);
  const opener = path.join(binDir, 'xdg-open');
  fs.writeFileSync(opener, `#!/bin/sh\nprintf '%s\\n' "$@" >> '${opened}'\n`);
  fs.chmodSync(opener, 0o755);
  driver = await startTauriDriver({
    port: await freePort(),
    nativePort: await freePort(),
    env: {
      PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}`,
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

/** Waits until the file exists and has text. */
async function waitForFile(file, what, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    if (text) return text;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('a link in a reply opens through the system opener', { skip }, async () => {
  ms.script([{ text: `The page is [the example](${LINK}).` }]);
  wd = await newSession(tauriCapabilities(bin), { url: driver.url });
  await waitForScript(
    `return [...document.querySelectorAll('[data-testid="session-item"]')].some((e) => e.textContent.includes(${JSON.stringify(TITLE)}))`,
    'the session in the sidebar',
  );
  await wd.executeScript(
    `[...document.querySelectorAll('[data-testid="session-item"]')].find((e) => e.textContent.includes(${JSON.stringify(TITLE)})).querySelector('button.main').click()`,
  );
  const input = await wd.waitForElement('[data-testid="composer-input"]', { timeoutMs: 30_000 });
  await wd.sendKeys(input, 'Where is the page?');
  await wd.sendKeys(input, '\uE007'); // Enter
  const link = await wd.waitForElement(`[data-testid="message-assistant"] a[href="${LINK}"]`, { timeoutMs: 60_000 });
  assert.equal(fs.existsSync(opened), false, 'nothing was opened before the click');
  await wd.click(link);
  const text = await waitForFile(opened, 'the system opener to be called');
  assert.deepEqual(text.trim().split('\n'), [LINK]);
});
