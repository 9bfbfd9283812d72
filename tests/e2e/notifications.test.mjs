// OS notifications in web mode, end to end in headless Chromium against real OpenCode and the
// scripted model server: the permission is granted through the browser context, the page's
// `Notification` constructor is wrapped to record what the app constructed (the real one still
// runs), and the window's focus is what the page's `hasFocus()` answers (headless Chromium
// always says focused), switched by the test.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launchBrowser, screenshot } from '../support/browser.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { subscribeEvents } from '../support/events.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';
import { until as untilCondition } from '../support/page.mjs';

const PASSWORD = 'e2e-secret';
const WAIT = 60_000;

let ms;
let oc;
let cc;
let browser;
let context;
let page;
const pageErrors = [];
let events;

before(async () => {
  ms = await startModelServer();
  oc = await startOpencode({ modelUrl: ms.url, password: PASSWORD });
  cc = await startCrosscheck({ opencodeUrl: oc.url, password: PASSWORD });
  browser = await launchBrowser();
  context = await browser.browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.grantPermissions(['notifications'], { origin: cc.base });
  await context.addInitScript(() => {
    window.__focused = true;
    Document.prototype.hasFocus = function hasFocus() {
      return window.__focused;
    };
    window.__notifications = [];
    const Real = window.Notification;
    window.Notification = class RecordedNotification extends Real {
      constructor(title, options = {}) {
        super(title, options);
        window.__notifications.push({ title, body: options.body, tag: options.tag, object: this });
      }
    };
  });
  page = await context.newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
  events = await subscribeEvents(oc.url, { headers: oc.authHeaders });
});

after(async () => {
  events?.close?.();
  await context?.close().catch(() => {});
  await browser?.close();
  await cc?.stop();
  await oc?.dispose();
  await ms?.close();
});

const until = (probe, what, timeoutMs = WAIT) => untilCondition(probe, what, timeoutMs);
const recorded = () => page.evaluate(() => window.__notifications.map(({ title, body, tag }) => ({ title, body, tag })));
const setFocused = (focused) => page.evaluate((f) => {
  window.__focused = f;
  window.dispatchEvent(new Event(f ? 'focus' : 'blur'));
}, focused);
const centre = (id) => page.locator(`main [data-testid="chat"][data-session-id="${id}"]`);

async function linkedPair(title) {
  const original = await oc.json('/session', { method: 'POST', body: { title } });
  const review = await oc.json('/session', {
    method: 'POST',
    body: { title: `Review: ${title}`, metadata: { openchamber: { kind: 'review', originalSessionID: original.id } } },
  });
  await oc.json(`/session/${original.id}`, { method: 'PATCH', body: { metadata: { openchamber: { reviewSessionID: review.id } } } });
  return { original, review };
}

/** Prompts a session through OpenCode (as a review flow would) and waits for its turn to end. */
async function turn(sessionId, text) {
  const from = events.events.length;
  await oc.fetch(`/session/${sessionId}/prompt_async`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ parts: [{ type: 'text', text }] }),
  });
  try {
    await events.waitForIdle(sessionId, { from, timeoutMs: WAIT });
  } catch (err) {
    const errors = events.events.slice(from).filter((e) => e.type === 'session.error').map((e) => JSON.stringify(e.properties).slice(0, 400));
    err.message += `; session errors: ${errors.join(' | ') || 'none'}`;
    throw err;
  }
}

test('a manual review that finishes in the background notifies; a click opens it; the setting turns it off', { timeout: 5 * 60_000 }, async () => {
  const t0 = Date.now();
  const { original, review } = await linkedPair('Parse CRLF files');
  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
  await page.locator(`[data-testid="session-item"][data-session-id="${original.id}"]`).click({ timeout: WAIT });
  await centre(original.id).waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await page.evaluate(() => Notification.permission), 'granted');

  // Focused: a finished review is seen in the app, no notification.
  ms.script([{ text: 'REVIEW-1: fine.' }]);
  await turn(review.id, 'Review this.');
  await page.waitForTimeout(500);
  assert.deepEqual(await recorded(), [], 'no notification while the window is focused');

  // In the background: one notification, with the review session's title.
  await setFocused(false);
  ms.script([{ text: 'REVIEW-2: the last line is dropped.' }]);
  await turn(review.id, 'Review again.');
  const [note] = await until(async () => {
    const list = await recorded();
    return list.length ? list : null;
  }, 'a notification');
  assert.deepEqual(note, { title: 'Review finished', body: `Review: Parse CRLF files: the reviewer has replied.`, tag: `review-done:${review.id}` });
  assert.equal((await recorded()).length, 1, 'exactly one notification');

  // The click (as the browser delivers it) opens the review session in the main area.
  await setFocused(true);
  await page.evaluate(() => window.__notifications[0].object.dispatchEvent(new Event('click')));
  await centre(review.id).waitFor({ state: 'visible', timeout: WAIT });
  await page.locator(`main [data-testid="chat"][data-session-id="${review.id}"] [data-testid="message-assistant"]`)
    .filter({ hasText: 'REVIEW-2' }).waitFor({ state: 'visible', timeout: WAIT });

  // Settings turns it off, the backend keeps it across a reload, and nothing more is shown.
  await page.locator('[data-testid="open-settings"]').click({ timeout: WAIT });
  const box = page.locator('[data-testid="settings-notify"][data-kind="reviewDone"]');
  await box.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await box.isChecked(), true);
  await box.uncheck({ timeout: WAIT });
  const saved = await until(async () => {
    const res = await fetch(`${cc.base}/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${cc.token}` },
      body: JSON.stringify({ cmd: 'snapshot' }),
    });
    const snap = await res.json();
    return snap.settings.notifications.reviewDone === false ? snap.settings.notifications : null;
  }, 'the setting saved by the backend');
  assert.deepEqual(saved, { reviewDone: false, permission: true, loopStopped: true, question: true, turnFailed: true, turnFinished: true, reviewStale: true, handoffFailed: true, sound: false });
  await page.reload();
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
  await page.locator('[data-testid="open-settings"]').click({ timeout: WAIT });
  assert.equal(await page.locator('[data-testid="settings-notify"][data-kind="reviewDone"]').isChecked(), false, 'kept across a reload');
  await page.keyboard.press('Escape');
  await setFocused(false);
  ms.script([{ text: 'REVIEW-3: still fine.' }]);
  await turn(review.id, 'Once more.');
  await page.waitForTimeout(800);
  assert.deepEqual(await recorded(), [], 'turned off: no notification (the page was reloaded, so the list starts empty)');
  await setFocused(true);
  assert.deepEqual(pageErrors, []);
  console.log(`review notification: ok in ${Date.now() - t0} ms`);
});

test('a session waiting for a permission notifies, and the click opens it', { timeout: 5 * 60_000 }, async () => {
  const t0 = Date.now();
  const asking = await oc.json('/session', {
    method: 'POST',
    body: { title: 'Clean the build', permission: [{ permission: 'bash', pattern: '*', action: 'ask' }] },
  });
  const other = await oc.json('/session', { method: 'POST', body: { title: 'Something else' } });
  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
  await page.locator(`[data-testid="session-item"][data-session-id="${other.id}"]`).click({ timeout: WAIT });
  await centre(other.id).waitFor({ state: 'visible', timeout: WAIT });
  await setFocused(false);

  ms.script([{ tool: 'bash', args: { command: 'rm -rf build', description: 'Remove the build folder' } }, { text: 'Done.' }]);
  await oc.fetch(`/session/${asking.id}/prompt_async`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ parts: [{ type: 'text', text: 'Clean the build folder.' }] }),
  });
  const note = await until(async () => (await recorded()).find((n) => n.title === 'Permission needed'), 'the permission notification');
  assert.equal(note.body, 'Clean the build waits for your answer: bash rm -rf build');
  assert.match(note.tag, /^permission:per_/);

  await setFocused(true);
  await page.evaluate(() => window.__notifications.find((n) => n.title === 'Permission needed').object.dispatchEvent(new Event('click')));
  await centre(asking.id).waitFor({ state: 'visible', timeout: WAIT });
  const prompt = page.locator(`main [data-testid="chat"][data-session-id="${asking.id}"] [data-testid="permission-request"]`);
  await prompt.first().waitFor({ state: 'visible', timeout: WAIT });
  await page.locator(`main [data-testid="chat"][data-session-id="${asking.id}"] [data-testid="message-user"]`).first().waitFor({ state: 'visible', timeout: WAIT });
  // The screenshot shows what the click opened, with the payload the app gave the browser's
  // Notification drawn over it by the test (headless Chromium draws no system notification).
  await page.evaluate((n) => {
    const box = document.createElement('div');
    box.id = 'recorded-notification';
    box.style.cssText = 'position:fixed;right:16px;bottom:16px;width:360px;padding:12px 14px;border-radius:10px;'
      + 'background:#1f2430;color:#fff;font:13px system-ui,sans-serif;box-shadow:0 8px 24px rgba(0,0,0,.35);z-index:99999';
    box.innerHTML = '<div style="opacity:.6;font-size:11px;margin-bottom:4px">Recorded Notification (drawn by the test)</div>'
      + `<div style="font-weight:600"></div><div style="margin-top:2px"></div><div style="opacity:.6;font-size:11px;margin-top:6px"></div>`;
    const [, title, body, tag] = box.children;
    title.textContent = n.title;
    body.textContent = n.body;
    tag.textContent = `tag ${n.tag}`;
    document.body.appendChild(box);
  }, note);
  await screenshot(page, 'notification');
  await page.evaluate(() => document.getElementById('recorded-notification')?.remove());
  // Answer it so the turn ends.
  const from = events.events.length;
  await prompt.first().locator('button[data-reply="reject"]').click({ timeout: WAIT });
  await events.waitForIdle(asking.id, { from, timeoutMs: WAIT });
  assert.equal((await recorded()).filter((n) => n.title === 'Permission needed').length, 1, 'one notification for one request');
  assert.deepEqual(pageErrors, []);
  console.log(`permission notification: ok in ${Date.now() - t0} ms`);
});
