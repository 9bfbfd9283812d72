// A wrong password is corrected without a restart, in Chromium against the real `opencode
// serve`: Crosscheck attached with a password OpenCode refuses shows "Password refused" in the
// top bar; the status opens a dialog with the address filled in and a password field, and the
// right password connects (the server's sessions are listed).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launchBrowser, screenshot } from '../support/browser.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';

const PASSWORD = 'the-right-one';
const UI_TIMEOUT = 30_000;

let ms;
let oc;
let cc;
let browser;
let page;

before(async () => {
  ms = await startModelServer();
  oc = await startOpencode({ modelUrl: ms.url, password: PASSWORD });
  await oc.json('/session', { method: 'POST', body: { title: 'Behind the password' } });
  cc = await startCrosscheck({ opencodeUrl: oc.url, password: 'a-typo' });
  browser = await launchBrowser();
  page = await browser.newPage();
  page.on('pageerror', (err) => console.log(`page error: ${err.message}`));
  await page.goto(cc.url);
});

after(async () => {
  await browser?.close();
  await cc?.stop();
  await oc?.dispose();
  await ms?.close();
});

test('a refused password is corrected from the top bar without a restart', async () => {
  const status = page.locator('[data-testid="server-status"]');
  await page.locator('[data-testid="server-status"][data-reason="unauthorized"]').waitFor({ timeout: UI_TIMEOUT });
  assert.match(await status.textContent(), /Password refused/);

  await status.click();
  const dialog = page.locator('[data-testid="server-dialog"]');
  await dialog.waitFor({ timeout: UI_TIMEOUT });
  await dialog.locator('[data-testid="server-dialog-refused"]').waitFor({ timeout: UI_TIMEOUT });
  assert.equal(await dialog.locator('[data-testid="attach-url"]').inputValue(), oc.url.replace(/\/+$/, ''));
  // The cursor waits in the password field.
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'attach-password');
  await page.keyboard.type(PASSWORD);
  await screenshot(page, 'server-password-refused');
  await dialog.locator('[data-testid="attach-submit"]').click();

  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ timeout: UI_TIMEOUT });
  await dialog.waitFor({ state: 'detached', timeout: UI_TIMEOUT });
  await page.locator('[data-testid="session-item"]').filter({ hasText: 'Behind the password' }).waitFor({ timeout: UI_TIMEOUT });
});
