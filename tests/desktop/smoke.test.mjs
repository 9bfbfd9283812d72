// Desktop smoke test: the real Tauri window through tauri-driver + WebKitWebDriver.
// Builds nothing: needs target/debug/crosscheck-desktop built with
// `--features tauri/custom-protocol` (else it loads the dev server), tauri-driver
// (cargo install tauri-driver --locked) and a DISPLAY (the Makefile runs this under xvfb-run).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { SCREENSHOT_DIR } from '../support/browser.mjs';
import { desktopPrerequisites, openSessionTitled, startDesktop, waitForScript } from '../support/webdriver.mjs';

const PASSWORD = 'desktop-secret';
const TITLE = 'Desktop smoke session';
const { missing, skip } = desktopPrerequisites();

let desktop;

before(async () => {
  if (skip) return;
  if (missing) throw new Error(`desktop smoke test cannot run: ${missing}`);
  desktop = await startDesktop({ title: TITLE, password: PASSWORD });
});

after(async () => {
  await desktop?.stop();
});

test('the desktop window lists the server\'s sessions and streams a reply over IPC', { skip }, async () => {
  const wd = await desktop.open();
  await openSessionTitled(wd, TITLE);
  const input = await wd.waitForElement('[data-testid="composer-input"]', { timeoutMs: 30_000 });
  const prompt = 'Hello from the desktop window';
  await wd.sendKeys(input, prompt);
  await wd.sendKeys(input, '\uE007'); // Enter
  // WebKitWebDriver's element text skips some nested nodes; read textContent in the page instead.
  const reply = await waitForScript(
    wd,
    `const m = [...document.querySelectorAll('[data-testid="message-assistant"]')].map((e) => e.textContent).find((t) => t.includes('FAKE-REPLY'));
     return m || null;`,
    'the streamed reply',
    60_000,
  );
  assert.match(reply, /FAKE-REPLY: Hello from the desktop window/);
  assert.equal(desktop.ms.chatRequests().at(-1).lastUserText, prompt);
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, 'desktop.png');
  const png = await wd.screenshot(file);
  assert.ok(png.length > 1000, 'screenshot has content');
});
