// Web mode's token: kept in the data folder (0600) across restarts, replaced by --new-token;
// without it (or with a wrong one) the browser gets a page that explains it, not the app; the
// app reloads without the token in the address. Browser-reserved shortcuts have Alt
// alternatives, and the tooltips name them.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launchBrowser, screenshot } from '../support/browser.mjs';
import { makeTempDir } from '../support/cleanup.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';

const UI_TIMEOUT = 20_000;
// Nothing listens on port 9: the app shows itself while it keeps trying to connect.
const NO_SERVER = 'http://127.0.0.1:9';

let dirs;
let browser;
let cc;

before(async () => {
  const root = makeTempDir('crosscheck-token-');
  dirs = { dataDir: path.join(root, 'data'), configDir: path.join(root, 'config') };
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await cc?.stop();
});

async function restart(args = []) {
  await cc?.stop();
  cc = await startCrosscheck({ opencodeUrl: NO_SERVER, ...dirs, args });
  return cc;
}

test('an address without the token gets a page that explains it and where to find the address', async () => {
  await restart();
  const page = await browser.newPage();
  const res = await page.goto(`${cc.base}/`);
  assert.equal(res.status(), 401);
  const tokenPage = page.locator('[data-testid="token-page"][data-reason="missing"]');
  await tokenPage.waitFor({ timeout: UI_TIMEOUT });
  const text = await tokenPage.textContent();
  assert.match(text, /crosscheck serve/);
  assert.ok(text.includes(`Crosscheck listening on ${cc.base}/?token=`), text);
  assert.equal(await page.locator('[data-testid="server-status"]').count(), 0, 'not the app');
  await screenshot(page, 'token-page');

  await page.goto(`${cc.base}/?token=wrong-token-wrong-token-wrong-to`);
  await page.locator('[data-testid="token-page"][data-reason="wrong"]').waitFor({ timeout: UI_TIMEOUT });
  await page.context().close();
});

test('the token survives a restart (kept 0600 in the data folder); --new-token replaces it', async () => {
  const file = path.join(dirs.dataDir, 'web-token');
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  const first = cc.token;
  assert.equal(fs.readFileSync(file, 'utf8').trim(), first);

  await restart();
  assert.equal(cc.token, first, 'the same token after a restart');
  const page = await browser.newPage();
  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"]').waitFor({ timeout: UI_TIMEOUT });
  // The address bar loses the token; a reload (the cookie) still opens the app, and its calls work.
  assert.equal(new URL(page.url()).search, '');
  await page.reload();
  await page.locator('[data-testid="server-status"]').waitFor({ timeout: UI_TIMEOUT });
  const snapshot = await page.evaluate(async () => {
    const token = document.querySelector('meta[name="crosscheck-token"]')?.getAttribute('content');
    const r = await fetch('/api', { method: 'POST', headers: { Authorization: `Bearer ${token}` }, body: '{"cmd":"snapshot"}' });
    return r.status;
  });
  assert.equal(snapshot, 200);

  await restart(['--new-token']);
  assert.notEqual(cc.token, first);
  assert.equal(fs.readFileSync(file, 'utf8').trim(), cc.token);
  const old = await page.goto(`${cc.base}/?token=${first}`);
  assert.equal(old.status(), 401);
  await page.locator('[data-testid="token-page"][data-reason="wrong"]').waitFor({ timeout: UI_TIMEOUT });
  await page.context().close();
});

test('Alt+N opens a new session in the browser (Ctrl+N is the browser\'s), and the tooltip says so', async () => {
  const page = await browser.newPage();
  await page.goto(cc.url);
  const button = page.locator('[data-testid="new-session"]');
  await button.waitFor({ timeout: UI_TIMEOUT });
  assert.match(await button.getAttribute('title'), /\(Alt\+N\)/);
  await page.locator('body').click();
  await page.keyboard.press('Alt+KeyN');
  await page.locator('[data-testid="new-session-directory"]').waitFor({ timeout: UI_TIMEOUT });
  await page.context().close();
});
