// The review tab's state, end to end in headless Chromium against real OpenCode and the
// scripted model server: the sent mark on a transferred message (kept across reloads and shown
// to other clients), a second send that asks first, and an orphaned review session.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { newRecordedPage, until as untilCondition } from '../support/page.mjs';
import { startStack } from '../support/stack.mjs';

const PASSWORD = 'e2e-secret';
const WAIT = 60_000;
const FEEDBACK_HEAD = 'Another agent reviewed your changes and left the feedback below.\n\n'
  + 'Please review the feedback, resolve the relevant issues, and explain what you changed.\n\n';
const REVIEW_TEXT = 'REVIEW: the parser drops the last line when it has no newline.';

let stack;
let ms;
let oc;
let cc;
let browser;
let page;
let pageErrors = [];
let events;

before(async () => {
  stack = await startStack({ password: PASSWORD, events: true });
  ({ ms, oc, cc, browser, page, pageErrors, events } = stack);
});

after(() => stack?.stop());

const until = (probe, what, timeoutMs = WAIT) => untilCondition(probe, what, timeoutMs);
const chats = (from = 0) => ms.requests.slice(from).filter((r) => r.kind === 'chat');
const sel = {
  chat: (id) => `[data-testid="chat"][data-session-id="${id}"]`,
  item: (id) => `[data-testid="session-item"][data-session-id="${id}"]`,
};

/** A linked pair made through OpenCode's API, the reviewer's reply already in. */
async function linkedPair(title) {
  const original = await oc.json('/session', { method: 'POST', body: { title } });
  const review = await oc.json('/session', {
    method: 'POST',
    body: { title: `Review: ${title}`, metadata: { openchamber: { kind: 'review', originalSessionID: original.id } } },
  });
  await oc.json(`/session/${original.id}`, { method: 'PATCH', body: { metadata: { openchamber: { reviewSessionID: review.id } } } });
  ms.script([{ text: REVIEW_TEXT }]);
  const idle = events.waitForIdle(review.id);
  await oc.fetch(`/session/${review.id}/prompt_async`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ parts: [{ type: 'text', text: 'Please review the handoff.' }] }),
  });
  await idle;
  return { original, review };
}

async function openSession(p, id) {
  await p.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
  await p.locator(sel.item(id)).click({ timeout: WAIT });
  await p.locator(sel.chat(id)).waitFor({ state: 'visible', timeout: WAIT });
}

const reviewReply = (p, id) => p.locator(`${sel.chat(id)} [data-testid="message-assistant"]`).filter({ hasText: 'REVIEW:' }).first();

test('a sent message is marked with its time, survives a reload, shows in another client and asks before a second send', { timeout: 5 * 60_000 }, async () => {
  const t0 = Date.now();
  const { original, review } = await linkedPair('Parse CRLF files');
  await page.goto(cc.url);
  await openSession(page, review.id);
  const reply = reviewReply(page, review.id);
  const button = reply.locator('[data-testid="transfer-button"]');
  await button.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await reply.locator('[data-testid="transfer-sent"]').count(), 0, 'no mark before the first send');

  const from = ms.requests.length;
  await button.click({ timeout: WAIT });
  const sent = await until(() => chats(from)[0], 'the feedback to reach the implementer');
  // The seed's words exactly, then the hidden part asking for answers by finding id.
  assert.ok(sent.lastUserText.startsWith(FEEDBACK_HEAD + REVIEW_TEXT + '\n'), sent.lastUserText);
  assert.match(sent.lastUserText, /\[F1\] FIXED/);
  const mark = reply.locator('[data-testid="transfer-sent"]');
  await mark.waitFor({ state: 'visible', timeout: WAIT });
  assert.match((await mark.textContent()).trim(), /^Sent \d{1,2}:\d{2}/);
  const sentAt = Number(await mark.getAttribute('data-sent-at'));
  assert.ok(Math.abs(sentAt - Date.now()) < 120_000, 'the mark carries the time it was sent');
  assert.equal(await button.getAttribute('data-sent'), 'true');

  // A reload keeps the mark: the backend recorded it.
  await page.reload();
  await page.locator(sel.chat(review.id)).waitFor({ state: 'visible', timeout: WAIT });
  await reviewReply(page, review.id).locator('[data-testid="transfer-sent"]').waitFor({ state: 'visible', timeout: WAIT });

  // Another client sees it too, and its second send asks first; Cancel sends nothing.
  const other = await newRecordedPage(browser);
  await other.page.goto(cc.url);
  await openSession(other.page, review.id);
  const otherReply = reviewReply(other.page, review.id);
  await otherReply.locator('[data-testid="transfer-sent"]').waitFor({ state: 'visible', timeout: WAIT });
  const before = ms.requests.length;
  await otherReply.locator('[data-testid="transfer-button"]').click({ timeout: WAIT });
  const dialog = other.page.locator('[data-testid="confirm-dialog"]');
  await dialog.waitFor({ state: 'visible', timeout: WAIT });
  assert.match(await dialog.textContent(), /already sent/);
  await dialog.getByRole('button', { name: 'Cancel' }).click({ timeout: WAIT });
  await dialog.waitFor({ state: 'detached', timeout: WAIT });
  assert.equal(chats(before).length, 0, 'Cancel sent nothing');

  // Yes sends it again; the first page's mark moves to the new time.
  await otherReply.locator('[data-testid="transfer-button"]').click({ timeout: WAIT });
  await dialog.waitFor({ state: 'visible', timeout: WAIT });
  await dialog.locator('[data-testid="confirm"]').click({ timeout: WAIT });
  const again = await until(() => chats(before)[0], 'the confirmed second send');
  // The seed's words exactly, then the hidden part asking for answers by finding id.
  assert.ok(again.lastUserText.startsWith(FEEDBACK_HEAD + REVIEW_TEXT + '\n'), again.lastUserText);
  assert.match(again.lastUserText, /\[F1\] FIXED/);
  await until(async () => Number(await reviewReply(page, review.id).locator('[data-testid="transfer-sent"]').getAttribute('data-sent-at')) > sentAt, 'the first page to show the newer send');
  const stored = await oc.json(`/session/${original.id}/message`);
  assert.equal(stored.filter((m) => m.info.role === 'user').length, 2, 'two sends reached the implementer, no more');
  await other.page.context().close();
  assert.deepEqual(other.pageErrors, []);
  assert.deepEqual(pageErrors, []);
  console.log(`sent mark: ok in ${Date.now() - t0} ms`);
});

test('an orphaned review session says so and offers to delete itself instead of transfers', { timeout: 5 * 60_000 }, async () => {
  const t0 = Date.now();
  const { original, review } = await linkedPair('Orphan me');
  await page.goto(cc.url);
  await openSession(page, review.id);
  await reviewReply(page, review.id).locator('[data-testid="transfer-button"]').waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await page.locator(`${sel.chat(review.id)} [data-testid="orphaned-review"]`).count(), 0);

  // The original goes (deleted in OpenCode, as another app would).
  await oc.json(`/session/${original.id}`, { method: 'DELETE' });
  const banner = page.locator(`${sel.chat(review.id)} [data-testid="orphaned-review"]`);
  await banner.waitFor({ state: 'visible', timeout: WAIT });
  assert.match(await banner.textContent(), /was deleted/);
  await until(async () => (await page.locator(`${sel.chat(review.id)} [data-testid="transfer-button"]`).count()) === 0, 'the transfer button to go');

  await banner.locator('[data-testid="delete-orphaned-review"]').click({ timeout: WAIT });
  const dialog = page.locator('[data-testid="confirm-dialog"]');
  await dialog.waitFor({ state: 'visible', timeout: WAIT });
  await dialog.locator('[data-testid="confirm"]').click({ timeout: WAIT });
  await page.locator(sel.item(review.id)).waitFor({ state: 'detached', timeout: WAIT });
  assert.equal((await oc.fetch(`/session/${review.id}`)).status, 404, 'the review session is deleted in OpenCode');
  const errors = (await page.evaluate(() => window.__toasts)).filter((t) => t.level === 'error');
  assert.deepEqual(errors, []);
  assert.deepEqual(pageErrors, []);
  console.log(`orphaned review: ok in ${Date.now() - t0} ms`);
});
