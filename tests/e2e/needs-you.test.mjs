// The "Needs you" list end to end in headless Chromium against real OpenCode and the scripted
// model server: permission requests in three sessions and a question in a fourth appear in the
// list; answering one from the list reaches OpenCode (checked through its API) and the item
// goes; one answered by another client leaves the list at once; a finished turn in a session
// not looked at shows as unread and counts in the title; a notification fires while a review
// is in the side panel of a window that is not focused; a loop stopped on a dispute shows on
// its review session's row and is decided from the loop strip.
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
const ASK_BASH = [{ permission: 'bash', pattern: '*', action: 'ask' }];

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
  context = await browser.browser.newContext({ viewport: { width: 1280, height: 860 } });
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
const item = (sessionId, kind) => page.locator(`[data-testid="needs-you-item"][data-session-id="${sessionId}"][data-kind="${kind}"]`);
const row = (sessionId) => page.locator(`[data-testid="session-item"][data-session-id="${sessionId}"]`);
const setFocused = (focused) => page.evaluate((f) => {
  window.__focused = f;
  window.dispatchEvent(new Event(f ? 'focus' : 'blur'));
}, focused);
/** Waits for the window title: the app sets it once the frame showing the change has painted,
 * so it may lag the list by a frame. */
async function titleIs(expected) {
  let last = '';
  try {
    await until(async () => ((last = await page.title()) === expected ? true : null), `the title "${expected}"`, 10_000);
  } catch {
    assert.equal(last, expected, 'the title counts the items');
  }
}
const recorded = () => page.evaluate(() => window.__notifications.map(({ title, body, tag }) => ({ title, body, tag })));

/** Prompts a session through OpenCode (as another client would). */
async function prompt(sessionId, text) {
  await oc.fetch(`/session/${sessionId}/prompt_async`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ parts: [{ type: 'text', text }] }),
  });
}

/** Makes a session's turn wait for a bash permission; answers the `per_...` id. */
async function askPermission(title, command) {
  const session = await oc.json('/session', { method: 'POST', body: { title, permission: ASK_BASH } });
  const from = events.events.length;
  ms.script([{ tool: 'bash', args: { command, description: title } }]);
  await prompt(session.id, `Please run ${command}`);
  const asked = await events.waitFor((e) => e.type === 'permission.asked' && e.properties.sessionID === session.id, { from, timeoutMs: WAIT, what: `the permission of ${title}` });
  return { session, requestId: asked.properties.id };
}

test('permissions in three sessions and a question in a fourth are listed, answered there or elsewhere, and leave the list', { timeout: 6 * 60_000 }, async () => {
  const t0 = Date.now();
  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });

  const quiet = await oc.json('/session', { method: 'POST', body: { title: 'Nothing to do' } });
  const asks = [];
  for (const [title, command] of [['Clean the build', 'rm -rf build'], ['Push the branch', 'git push origin main'], ['Reset the cache', 'rm -rf .cache']]) {
    asks.push(await askPermission(title, command));
  }
  const asking = await oc.json('/session', { method: 'POST', body: { title: 'Pick a branch' } });
  let from = events.events.length;
  ms.script([{ tool: 'question', args: { questions: [{ question: 'Which branch should I merge into?', header: 'Branch', options: [{ label: 'main', description: 'The main branch' }, { label: 'develop', description: 'The next release' }] }] } }]);
  await prompt(asking.id, 'Merge my work.');
  const asked = await events.waitFor((e) => e.type === 'question.asked' && e.properties.sessionID === asking.id, { from, timeoutMs: WAIT, what: 'the question' });
  const questionId = asked.properties.id;

  // All four are listed, newest first, each with its reason in words.
  for (const { session } of asks) await item(session.id, 'permission').waitFor({ state: 'visible', timeout: WAIT });
  await item(asking.id, 'question').waitFor({ state: 'visible', timeout: WAIT });
  const listed = await page.locator('[data-testid="needs-you-item"]').evaluateAll((els) => els.map((e) => `${e.dataset.sessionId}:${e.dataset.kind}`));
  assert.deepEqual(listed.slice(0, 4), [`${asking.id}:question`, ...asks.map((a) => `${a.session.id}:permission`).reverse()], 'newest first');
  assert.equal(await item(asks[0].session.id, 'permission').locator('[data-testid="needs-you-reason"]').textContent(), 'Asks for permission');
  assert.equal(await item(asks[0].session.id, 'permission').locator('[data-testid="needs-you-words"]').textContent(), 'bash rm -rf build');
  assert.equal(await item(asking.id, 'question').locator('[data-testid="needs-you-question"]').textContent(), 'Which branch should I merge into?');
  // The rows carry the permission mark too, from the same field.
  await row(asks[1].session.id).locator('[data-testid="session-permission"]').waitFor({ state: 'visible', timeout: WAIT });
  // The title counts the items.
  await titleIs('(4) Crosscheck');
  await screenshot(page, 'needs-you');
  // The filters keep one line in the sidebar with the widest count ("99+") and a longer label:
  // measured on a copy beside them, so the list itself is left as it is.
  const line = await page.locator('[data-testid="needs-you"] .filters').evaluate((filters) => {
    const copy = filters.cloneNode(true);
    copy.querySelector('[data-testid="needs-you-count"]').textContent = '99+';
    copy.querySelector('[data-filter="needsYou"] .label').textContent = 'Braucht dich';
    filters.after(copy);
    const chips = [...copy.querySelectorAll('[data-testid="sidebar-filter"]')].map((c) => c.getBoundingClientRect());
    const box = filters.parentElement.getBoundingClientRect();
    copy.remove();
    return { tops: chips.map((c) => Math.round(c.top)), right: Math.max(...chips.map((c) => c.right)), edge: box.right };
  });
  assert.equal(new Set(line.tops).size, 1, `the filters wrapped: ${JSON.stringify(line)}`);
  assert.ok(line.right <= line.edge + 0.5, `the filters overflow the sidebar: ${JSON.stringify(line)}`);

  // Answered from the list: OpenCode has it (its own list no longer holds it, and the event
  // carries the reply), and the item goes.
  from = events.events.length;
  await item(asks[0].session.id, 'permission').locator('[data-testid="needs-you-permit"][data-reply="once"]').click({ timeout: WAIT });
  const replied = await events.waitFor((e) => e.type === 'permission.replied' && e.properties.requestID === asks[0].requestId, { from, timeoutMs: WAIT, what: 'the reply' });
  assert.equal(replied.properties.reply, 'once');
  const pending = await oc.json('/permission');
  assert.ok(!pending.some((p) => p.id === asks[0].requestId), 'OpenCode no longer waits for it');
  await item(asks[0].session.id, 'permission').waitFor({ state: 'detached', timeout: WAIT });

  // Answered by another client through OpenCode's API: it leaves the list at once.
  await oc.fetch(`/permission/${asks[1].requestId}/reply`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ reply: 'reject' }),
  });
  await item(asks[1].session.id, 'permission').waitFor({ state: 'detached', timeout: 5_000 });

  // The question, answered with one of its options.
  from = events.events.length;
  await item(asking.id, 'question').locator('[data-testid="needs-you-option"][data-label="main"]').click({ timeout: WAIT });
  const answered = await events.waitFor((e) => e.type === 'question.replied' && e.properties.requestID === questionId, { from, timeoutMs: WAIT, what: 'the answer' });
  assert.deepEqual(answered.properties.answers, [['main']]);
  assert.deepEqual(await oc.json('/question'), [], 'OpenCode no longer waits for an answer');
  await item(asking.id, 'question').waitFor({ state: 'detached', timeout: WAIT });
  await item(asks[2].session.id, 'permission').waitFor({ state: 'visible', timeout: WAIT });

  // The filter "Needs you" keeps only the sessions that need the person.
  await page.locator('[data-testid="sidebar-filter"][data-filter="needsYou"]').click();
  await until(async () => ((await row(asks[2].session.id).isVisible()) && (await row(quiet.id).count()) === 0 ? true : null), 'only sessions that need you');
  await page.locator('[data-testid="sidebar-filter"][data-filter="all"]').click();
  await page.locator('[data-testid="needs-you-item"][data-kind="permission"]').first().locator('[data-testid="needs-you-permit"][data-reply="reject"]').click();
  assert.deepEqual(pageErrors, []);
  console.log(`needs you list: ok in ${Date.now() - t0} ms`);
});

test('a finished turn in a session not looked at is unread and counts in the title; looking settles it for good', { timeout: 5 * 60_000 }, async () => {
  const watched = await oc.json('/session', { method: 'POST', body: { title: 'Watched here' } });
  const busy = await oc.json('/session', { method: 'POST', body: { title: 'Working elsewhere' } });
  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
  await row(watched.id).click({ timeout: WAIT });
  // The first test's turns have ended (their items are in, so the count below is stable).
  await until(async () => (Object.keys((await cc.api({ cmd: 'snapshot' })).statuses).length === 0 ? true : null), 'no turn running');
  await page.waitForTimeout(300);
  const before = await page.locator('[data-testid="needs-you-item"]').count();

  const from = events.events.length;
  await prompt(busy.id, 'Summarize the repository.');
  await events.waitForIdle(busy.id, { from, timeoutMs: WAIT });
  await item(busy.id, 'turnFinished').waitFor({ state: 'visible', timeout: WAIT });
  await row(busy.id).locator('[data-testid="session-unread"]').waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await row(watched.id).locator('[data-testid="session-unread"]').count(), 0, 'the session looked at is not unread');
  await titleIs(`(${before + 1}) Crosscheck`);

  // Looking at it settles it, and a reload (a restart of the page) does not raise it again.
  await row(busy.id).click({ timeout: WAIT });
  await row(busy.id).locator('[data-testid="session-unread"]').waitFor({ state: 'detached', timeout: WAIT });
  await item(busy.id, 'turnFinished').waitFor({ state: 'detached', timeout: WAIT });
  await page.reload();
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
  await row(busy.id).waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await row(busy.id).locator('[data-testid="session-unread"]').count(), 0);
  await titleIs(before > 0 ? `(${before}) Crosscheck` : 'Crosscheck');
  assert.deepEqual(pageErrors, []);
});

test('a review in the side panel of a window that is not focused notifies when its turn ends', { timeout: 5 * 60_000 }, async () => {
  const original = await oc.json('/session', { method: 'POST', body: { title: 'Parse dates' } });
  const review = await oc.json('/session', {
    method: 'POST',
    body: { title: 'Review: Parse dates', metadata: { openchamber: { kind: 'review', originalSessionID: original.id } } },
  });
  await oc.json(`/session/${original.id}`, { method: 'PATCH', body: { metadata: { openchamber: { reviewSessionID: review.id } } } });
  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
  await row(original.id).click({ timeout: WAIT });
  await cc.api({ cmd: 'openTab', tab: { mode: 'chat', dedupeKey: `session:${review.id}`, label: 'Review: Parse dates', directory: review.directory, sessionId: review.id } });
  await page.locator(`[data-testid="chat"][data-session-id="${review.id}"]`).waitFor({ state: 'visible', timeout: WAIT });
  await page.evaluate(() => (window.__notifications.length = 0));

  await setFocused(false);
  const from = events.events.length;
  ms.script([{ text: 'REVIEW: one finding.' }]);
  await prompt(review.id, 'Review this.');
  await events.waitForIdle(review.id, { from, timeoutMs: WAIT });
  const note = await until(async () => (await recorded()).find((n) => n.tag === `review-done:${review.id}`), 'the review notification');
  assert.deepEqual(note, { title: 'Review finished', body: 'Review: Parse dates: the reviewer has replied.', tag: `review-done:${review.id}` });
  // Not focused, so not seen: the item stays until the person looks.
  await item(review.id, 'turnFinished').waitFor({ state: 'visible', timeout: WAIT });
  await setFocused(true);
  await item(review.id, 'turnFinished').waitFor({ state: 'detached', timeout: WAIT });
  assert.deepEqual(pageErrors, []);
});

test('a loop stopped on a dispute shows on its row and is decided from the strip', { timeout: 6 * 60_000 }, async () => {
  const original = await oc.json('/session', { method: 'POST', body: { title: 'Greet disputed' } });
  ms.script([
    { text: 'HANDOFF: greet() now takes a name.' },
    { text: 'FINDINGS\n- [F1] major src/lib.rs:3 — greet() panics on an empty name\nVERDICT: FLAGS (1)' },
    { text: 'IMPLEMENTED: nothing to change.\n\n- [F1] DISPUTED — the caller never passes an empty name: `if name.is_empty() { return None; }`' },
    { text: 'FINDINGS\n- [F1] OPEN — callers pass user input\nVERDICT: FLAGS (1)' },
  ]);
  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
  await row(original.id).click({ timeout: WAIT });
  const chat = `[data-testid="chat"][data-session-id="${original.id}"]`;
  const input = page.locator(`${chat} [data-testid="composer-input"]`);
  await input.waitFor({ state: 'visible', timeout: WAIT });
  await input.click();
  await input.fill('/handoff-review');
  const menu = page.locator(`${chat} [data-testid="command-menu"]`);
  await menu.waitFor({ state: 'visible', timeout: WAIT });
  await menu.locator('[data-testid="command-item"][data-name="handoff-review"]').click({ timeout: WAIT });
  await until(async () => ((await input.inputValue()).trim() === '/handoff-review' ? true : null), 'the picked command');
  await input.press('Enter');
  const dialog = page.locator('[data-testid="handoff-dialog"]');
  await dialog.waitFor({ state: 'visible', timeout: WAIT });
  await dialog.getByLabel('Automatic review loop').check();
  await dialog.locator('[data-testid="handoff-start"]').click({ timeout: WAIT });
  await dialog.waitFor({ state: 'detached', timeout: WAIT });
  // The person looks away while the loop runs.
  await setFocused(false);

  const stopped = page.locator(`${chat} [data-testid="loop-progress"][data-state="stopped"]`);
  await stopped.waitFor({ state: 'visible', timeout: 2 * WAIT });
  assert.equal(await stopped.getAttribute('data-reason'), 'disputed');
  const loops = await cc.api({ cmd: 'listLoops' });
  const loop = loops.find((l) => l.originalSessionId === original.id);
  const mark = row(loop.reviewSessionId).locator('[data-testid="session-loop-stopped"]');
  await mark.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await mark.getAttribute('data-stop'), 'disputed');
  await item(loop.reviewSessionId, 'loopStopped').waitFor({ state: 'visible', timeout: WAIT });

  // Decided from the strip: the dispute is accepted and the finding withdrawn.
  await setFocused(true);
  await stopped.locator('[data-testid="loop-decide-withdraw"]').click({ timeout: WAIT });
  await until(async () => {
    const view = await cc.api({ cmd: 'listFindings', sessionId: original.id });
    return view.findings.find((f) => f.id === 'F1')?.status === 'withdrawn' ? true : null;
  }, 'F1 withdrawn');
  assert.deepEqual(pageErrors, []);
});
