// Every OpenCode server in one window, in Chromium against three real `opencode serve`
// processes of two versions (the pinned one twice, one of them behind a password, and 1.15.13):
// the sessions of all three are listed, grouped by server; a handoff runs on one server while
// another is killed, and the killed one's sessions stay on screen greyed, then come back after
// its restart; a server is renamed inline in the sidebar (Esc cancels, Enter saves) and Settings
// says where its password is kept; a server added in the app stays in the list, under its new
// name, across a restart of Crosscheck; one is removed from Settings with a notice; the same
// address twice is refused.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launchBrowser, screenshot } from '../support/browser.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { opencodeBinOf, startOpencode } from '../support/opencode.mjs';
import { until } from '../support/page.mjs';

const PASSWORD = 'third-server-secret';
const WAIT = 60_000;
const FILE_STORE = { CROSSCHECK_SECRET_STORE: 'file' };

let ms;
let a;
let b;
let c;
let cc;
let browser;
let page;

const section = (id) => page.locator(`[data-testid="server-section"][data-server-id="${id}"]`);
const sectionByName = (name) => page.locator('[data-testid="server-section"]').filter({
  has: page.locator('[data-testid="server-name"]', { hasText: name }),
});
const row = (title) => page.locator('[data-testid="session-item"]').filter({ hasText: title });

async function openApp() {
  page = await browser.newPage();
  page.on('pageerror', (err) => console.log(`page error: ${err.message}`));
  await page.goto(cc.url);
}

before(async () => {
  ms = await startModelServer();
  [a, b, c] = await Promise.all([
    startOpencode({ modelUrl: ms.url }),
    startOpencode({ modelUrl: ms.url, bin: opencodeBinOf('opencode-ai-1-15') }),
    startOpencode({ modelUrl: ms.url, password: PASSWORD }),
  ]);
  await a.json('/session', { method: 'POST', body: { title: 'Alpha on the first server' } });
  await b.json('/session', { method: 'POST', body: { title: 'Bravo on the older server' } });
  await c.json('/session', { method: 'POST', body: { title: 'Charlie behind a password' } });
  // Passwords in the file store, never in the keyring of whoever runs the tests.
  cc = await startCrosscheck({ opencodeUrl: a.url, args: ['--opencode', b.url], env: FILE_STORE });
  browser = await launchBrowser();
  await openApp();
});

after(async () => {
  await browser?.close();
  await cc?.stop();
  await Promise.all([a, b, c].map((s) => s?.dispose()));
  await ms?.close();
});

test('three servers of two versions, one with a password, in one sidebar', async () => {
  // The third server is added in the app, with its password.
  await page.locator('[data-testid="add-server"]').click();
  await page.locator('[data-testid="add-server-url"]').fill(c.url);
  await page.locator('[data-testid="add-server-password"]').fill(PASSWORD);
  await page.locator('[data-testid="add-server-name"]').fill('Shared box');
  await page.locator('[data-testid="add-server-submit"]').click();
  await page.locator('[data-testid="add-server-form"]').waitFor({ state: 'detached', timeout: WAIT });

  await until(async () => (await page.locator('[data-testid="server-section"]').count()) === 3, 'three server sections', WAIT);
  await section('main').locator('[data-health="ready"]').waitFor({ timeout: WAIT });
  await sectionByName('Shared box').locator('[data-health="ready"]').waitFor({ timeout: WAIT });
  await until(async () => (await page.locator('[data-testid="server-header"][data-health="ready"]').count()) === 3, 'all three connected', WAIT);

  // Each session under its own server, each server with its version.
  await section('main').locator('[data-testid="session-item"]', { hasText: 'Alpha on the first server' }).waitFor({ timeout: WAIT });
  await sectionByName('Shared box').locator('[data-testid="session-item"]', { hasText: 'Charlie behind a password' }).waitFor({ timeout: WAIT });
  const older = page.locator('[data-testid="server-section"]').filter({ hasText: 'Bravo on the older server' });
  await older.waitFor({ timeout: WAIT });
  assert.match(await older.locator('[data-testid="server-health"]').textContent(), /1\.15\.13/);
  assert.match(await section('main').locator('[data-testid="server-health"]').textContent(), /1\.18\.33/);
  assert.equal(await section('main').locator('[data-testid="session-item"]', { hasText: 'Bravo' }).count(), 0, 'no session under another server');

  // Search covers every server.
  await page.locator('[data-testid="session-search"]').fill('on the');
  await row('Alpha on the first server').waitFor({ timeout: WAIT });
  await row('Bravo on the older server').waitFor({ timeout: WAIT });
  assert.equal(await row('Charlie').count(), 0);
  await page.locator('[data-testid="session-search"]').fill('');

  const stats = await (await fetch(`${cc.base}/api/stats`, { headers: { authorization: `Bearer ${cc.token}` } })).json();
  assert.equal(Object.keys(stats.servers).length, 3, JSON.stringify(stats));
  for (const s of Object.values(stats.servers)) assert.ok(s.sessions >= 1, JSON.stringify(stats));
});

test('the same address twice is refused with a clear error', async () => {
  await page.locator('[data-testid="add-server"]').click();
  // Another spelling of the second server's address.
  await page.locator('[data-testid="add-server-url"]').fill(`${b.url.replace('127.0.0.1', 'localhost')}/`);
  await page.locator('[data-testid="add-server-submit"]').click();
  const error = page.locator('[data-testid="add-server-error"]');
  await error.waitFor({ timeout: WAIT });
  assert.match(await error.textContent(), /already in the list/);
  await page.getByRole('button', { name: 'Cancel' }).click();
  assert.equal(await page.locator('[data-testid="server-section"]').count(), 3);
});

test('a handoff on one server while another is killed; the killed one greys, then comes back', async () => {
  const snapshot = await cc.api({ cmd: 'snapshot' });
  const charlie = snapshot.sessions.find((s) => s.title === 'Charlie behind a password');
  const bravo = snapshot.sessions.find((s) => s.title === 'Bravo on the older server');
  assert.ok(charlie && bravo);
  assert.notEqual(charlie.serverId, 'main');
  assert.notEqual(bravo.serverId, charlie.serverId);

  await b.stop();
  const flow = await cc.api({ cmd: 'startHandoffReview', sessionId: charlie.id });
  const killed = section(bravo.serverId);
  await killed.locator('[data-testid="server-header"]:not([data-health="ready"])').waitFor({ timeout: WAIT });
  assert.ok(await killed.evaluate((el) => el.classList.contains('down')), 'its part of the sidebar is greyed');
  await row('Bravo on the older server').waitFor({ timeout: WAIT });
  await screenshot(page, 'servers-one-down');

  // The handoff ends on its own server, untouched by the other one's fault.
  const ended = await until(async () => {
    const f = (await cc.api({ cmd: 'snapshot' })).flows.find((x) => x.id === flow.id);
    return f && ['done', 'failed', 'cancelled'].includes(f.step) ? f : null;
  }, 'the handoff to end', WAIT * 2);
  assert.equal(ended.step, 'done', JSON.stringify(ended.error));
  const onC = await c.json('/session');
  assert.ok(onC.some((s) => s.id === ended.reviewSessionId), 'the review session is on the original\'s server');
  const review = (await cc.api({ cmd: 'snapshot' })).sessions.find((s) => s.id === ended.reviewSessionId);
  assert.equal(review?.serverId, charlie.serverId);
  assert.equal(await section('main').locator('[data-health="ready"]').count(), 1, 'the main server stayed connected');

  await b.restart();
  await killed.locator('[data-testid="server-header"][data-health="ready"]').waitFor({ timeout: WAIT });
  assert.ok(!(await killed.evaluate((el) => el.classList.contains('down'))));
  await killed.locator('[data-testid="session-item"]', { hasText: 'Bravo on the older server' }).waitFor({ timeout: WAIT });
  await screenshot(page, 'servers-three');
});

test('a server is renamed inline in the sidebar and Settings says where its password is', async () => {
  // By its id: while it is renamed, its name is a field.
  const shared = section(await sectionByName('Shared box').getAttribute('data-server-id'));
  // Esc leaves the name as it was.
  await shared.locator('[data-testid="server-rename"]').click();
  const input = shared.locator('[data-testid="server-rename-input"]');
  await input.fill('Not this');
  await input.press('Escape');
  await shared.locator('[data-testid="server-name"]').waitFor({ timeout: WAIT });
  assert.equal(await page.locator('[data-testid="server-name"]', { hasText: 'Not this' }).count(), 0);
  // Reached from the keyboard: Tab to the Rename button, Enter opens the field, Enter saves.
  await shared.locator('[data-testid="server-rename"]').focus();
  await page.keyboard.press('Enter');
  await input.fill('Team box');
  await screenshot(page, 'servers-rename');
  await input.press('Enter');
  const team = sectionByName('Team box');
  await team.locator('[data-testid="server-name"]').waitFor({ timeout: WAIT });
  assert.equal(await sectionByName('Shared box').count(), 0);

  // Settings lists the servers and says where saved passwords are kept: a file only you can read.
  await page.locator('[data-testid="open-settings"]').click();
  const storage = page.locator('[data-testid="settings-password-store"]');
  await storage.waitFor({ timeout: WAIT });
  assert.equal(await storage.getAttribute('data-store'), 'file');
  const dir = path.join(cc.dataDir, 'server-passwords');
  assert.ok((await storage.textContent()).includes(dir), await storage.textContent());
  const files = fs.readdirSync(dir);
  assert.equal(files.length, 1, files.join(', '));
  assert.equal(fs.statSync(path.join(dir, files[0])).mode & 0o777, 0o600);
  assert.equal(fs.readFileSync(path.join(dir, files[0]), 'utf8'), PASSWORD);
  assert.equal(await page.locator('[data-testid="settings-server"]').count(), 3);
  await page.locator('[data-testid="settings-server"]', { hasText: 'Team box' }).waitFor({ timeout: WAIT });
  await page.locator('[data-testid="settings-server-section"]').scrollIntoViewIfNeeded();
  await screenshot(page, 'settings-servers');
  await page.keyboard.press('Escape');
});

test('a server added in the app is kept across a restart of Crosscheck, under its new name', async () => {
  const dataDir = cc.dataDir;
  const configDir = cc.configDir;
  await page.close();
  await cc.stop();
  cc = await startCrosscheck({ opencodeUrl: a.url, dataDir, configDir, env: FILE_STORE });
  await openApp();
  const shared = sectionByName('Team box');
  await shared.locator('[data-testid="server-header"][data-health="ready"]').waitFor({ timeout: WAIT });
  await shared.locator('[data-testid="session-item"]', { hasText: 'Charlie behind a password', hasNotText: 'Review:' }).waitFor({ timeout: WAIT });
  // Given on the command line only, the second server is not kept.
  assert.equal(await page.locator('[data-testid="server-section"]').count(), 2);
});

test('a server removed in Settings leaves the sidebar with a notice, its password with it', async () => {
  await page.locator('[data-testid="open-settings"]').click();
  const named = page.locator('[data-testid="settings-server"]', { hasText: 'Team box' });
  await named.waitFor({ timeout: WAIT });
  // By its id: while it is renamed, its name is a field.
  const entry = page.locator(`[data-testid="settings-server"][data-server-id="${await named.getAttribute('data-server-id')}"]`);
  // Renamed in Settings too (Enter saves).
  await entry.locator('[data-testid="settings-server-rename"]').click();
  await entry.locator('[data-testid="settings-server-rename-input"]').fill('Old box');
  await entry.locator('[data-testid="settings-server-rename-input"]').press('Enter');
  await sectionByName('Old box').waitFor({ timeout: WAIT });
  await page.locator('[data-testid="settings-server"]', { hasText: 'Old box' }).locator('[data-testid="settings-server-remove"]').click();
  await page.locator('[data-testid="toast"]', { hasText: 'Removed the server Old box' }).waitFor({ timeout: WAIT });
  // With one server left the sidebar shows no server sections at all.
  await until(async () => (await page.locator('[data-testid="server-section"]').count()) === 0, 'no server section left', WAIT);
  assert.equal((await cc.api({ cmd: 'snapshot' })).servers.length, 1);
  assert.equal(await row('Charlie behind a password').count(), 0, 'its sessions left with it');
  assert.deepEqual(fs.readdirSync(path.join(cc.dataDir, 'server-passwords')), []);
  await page.keyboard.press('Escape');
});
