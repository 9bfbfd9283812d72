// The review handoff end to end: the seed's manual validation checklist (14 steps) as one test,
// in headless Chromium against real OpenCode and the scripted model server. Metadata is checked
// through OpenCode's own HTTP API; prompts are checked in what the model server received.
import { newRecordedPage, sleep, until as untilCondition } from '../support/page.mjs';
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launchBrowser, screenshot } from '../support/browser.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';

const PASSWORD = 'e2e-secret';
/** Every wait: the machine is slow and loaded. */
const WAIT = 60_000;
const TITLE = 'Parse CRLF config files';
const REVIEW_TITLE = `Review: ${TITLE}`;

// The agreed wording (seed "Review Flow Implementation Plan", section 5), matched exactly.
const HANDOFF_VISIBLE = 'Prepare a handoff for another agent to review this work.';
const HANDOFF_INSTRUCTIONS_START = 'Produce a review handoff for another agent.';
const REVIEW_PROMPT_HEAD = 'Please review the changes described in this handoff.\n\n'
  + 'Focus on correctness, regressions, missing implementation, missing tests, and whether the '
  + 'implementation satisfies the stated intent. Provide concise, actionable feedback for the agent '
  + 'implementing the changes.\n\n';
const FEEDBACK_HEAD = 'Another agent reviewed your changes and left the feedback below.\n\n'
  + 'Please review the feedback, resolve the relevant issues, and explain what you changed.\n\n';
const RESPONSE_HEAD = 'The agent implementing the changes has responded to the previous review feedback.\n\n'
  + 'Please review the latest state again and report any remaining issues.\n\n';

// Scripted model replies, in the order the turns happen. Each text that is carried to the other
// session holds a literal placeholder of its template: it must arrive as written (no second
// expansion).
/** The hidden parts that follow the seed's words (read from the running app's registry). */
let FINDINGS_HIDDEN = '';
let ANSWERS_HIDDEN = '';
const toReviewer = (visible) => `${visible}\n${FINDINGS_HIDDEN}`;
const toImplementer = (visible) => `${visible}\n${ANSWERS_HIDDEN}`;

const HANDOFF_1 = 'HANDOFF: implemented X in src/x.rs; tests pass. The marker {{handoff}} stays as written.';
const REVIEW_1 = 'REVIEW: missing test for CRLF line endings in src/x.rs; {{review_feedback}} is literal.';
const IMPL_1 = 'IMPLEMENTED: added a CRLF test in tests/x_crlf.rs; all tests pass; {{implementation_response}} is literal.';
const REVIEW_2 = 'REVIEW-2: the CRLF test covers it; no remaining issues.';
const HANDOFF_2 = 'HANDOFF-2: second pass, the CRLF test is in tests/x_crlf.rs.';
const REVIEW_3 = 'REVIEW-3: still looks good.';

/** Nothing an agent sees may name sessions, messages, metadata or how messages travel. */
const FORBIDDEN = ['ses_', 'msg_', 'openchamber', 'metadata', 'reviewSessionID', 'originalSessionID', 'linked', 'routing'];

let ms;
let oc;
let cc;
let browser;
let page;
let pageErrors = [];

before(async () => {
  ms = await startModelServer();
  oc = await startOpencode({ modelUrl: ms.url, password: PASSWORD });
  cc = await startCrosscheck({ opencodeUrl: oc.url, password: PASSWORD });
  const templates = await cc.api({ cmd: 'prompts' });
  const template = (name) => templates.find((t) => t.name === name).template;
  FINDINGS_HIDDEN = template('session.reviewFindings.instructions');
  ANSWERS_HIDDEN = template('session.reviewAnswers.instructions');
  browser = await launchBrowser();
  ({ page, pageErrors } = await newRecordedPage(browser));
});

after(async () => {
  await browser?.close();
  await cc?.stop();
  await oc?.dispose();
  await ms?.close();
});

// ---- helpers --------------------------------------------------------------------------------


/** Polls `probe` (sync or async) until it returns a truthy value; returns that value. */
const until = (probe, what, timeoutMs = WAIT) => untilCondition(probe, what, timeoutMs);

/** The chat requests (not title requests) the model server received, from index `from` on. */
const chats = (from = 0) => ms.requests.slice(from).filter((r) => r.kind === 'chat');

/**
 * Waits for the `k`-th chat request (0-based) received after `ms.requests[from]` and checks its
 * prompt is exactly `expected` (turns run one at a time, so their order is known).
 */
async function nthChat(from, k, expected) {
  const req = await until(() => chats(from)[k], `model chat request #${k + 1} after request ${from}`);
  if (expected !== undefined) assert.equal(req.lastUserText, expected, 'the prompt the model received, exactly');
  return req;
}

/** Every text of a request's messages of one role (assistant history, user turns). */
function textsOf(request, role) {
  return (request.messages ?? [])
    .filter((m) => m.role === role)
    .map((m) => (typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => p?.text ?? '').join('\n')));
}

const count = (haystack, needle) => haystack.split(needle).length - 1;

/** No request the model received names ids, metadata or routing (title requests excepted). */
function assertNoLeaks() {
  for (const r of ms.requests) {
    if (r.kind === 'title') continue;
    const body = JSON.stringify(r.body);
    for (const word of FORBIDDEN) {
      const at = body.toLowerCase().indexOf(word.toLowerCase());
      assert.equal(at, -1, `model request #${r.seq} contains "${word}": …${body.slice(Math.max(0, at - 80), at + 80)}…`);
    }
  }
}

const session = (id) => oc.json(`/session/${id}`);
const messages = (id) => oc.json(`/session/${id}/message`);
const sessionList = () => oc.json('/session');

/** A session's messages in OpenCode once it holds `n` of them and the last one is complete. */
function waitStored(id, n) {
  return until(async () => {
    const list = await messages(id);
    const last = list[list.length - 1];
    return list.length === n && last?.info.role === 'assistant' && last.info.time?.completed ? list : null;
  }, `${n} stored messages in ${id}`);
}

/** Text of the non-synthetic text parts of an OpenCode message. */
const visibleText = (m) => m.parts.filter((p) => p.type === 'text' && !p.synthetic).map((p) => p.text).join('\n');

const sel = {
  chat: (id) => `[data-testid="chat"][data-session-id="${id}"]`,
  panelChat: (id) => `[data-testid="context-panel"] [data-testid="chat"][data-session-id="${id}"]`,
  tab: (id) => `[data-testid="context-tab"][data-key="session:${id}"]`,
  item: (id) => `[data-testid="session-item"][data-session-id="${id}"]`,
};

/** The assistant message in `scope` whose text contains `text`. */
const assistantWith = (scope, text) => page.locator(`${scope} [data-testid="message-assistant"]`).filter({ hasText: text });

/** Waits until the assistant message with `text` is shown and has finished streaming. */
async function waitReply(scope, text) {
  const msg = assistantWith(scope, text);
  await msg.first().waitFor({ state: 'visible', timeout: WAIT });
  await until(async () => (await msg.first().getAttribute('aria-busy')) !== 'true', `"${text}" to finish streaming`);
  return msg.first();
}

const toasts = () => page.evaluate(() => window.__toasts ?? []);

async function assertNoErrorToast() {
  const errors = (await toasts()).filter((t) => t.level === 'error');
  assert.deepEqual(errors, [], 'no error toast');
}

/** Types /handoff-review in the session's composer, picks it from the menu, starts the flow. */
async function startHandoff(sessionId) {
  const input = page.locator(`${sel.chat(sessionId)} [data-testid="composer-input"]`);
  await input.waitFor({ state: 'visible', timeout: WAIT });
  await input.click();
  await input.fill('/handoff-review');
  const menu = page.locator(`${sel.chat(sessionId)} [data-testid="command-menu"]`);
  await menu.waitFor({ state: 'visible', timeout: WAIT });
  await menu.locator('[data-testid="command-item"][data-name="handoff-review"]').click({ timeout: WAIT });
  await until(async () => (await input.inputValue()).trim() === '/handoff-review', 'the picked command in the composer');
  await input.press('Enter');
  const dialog = page.locator('[data-testid="handoff-dialog"]');
  await dialog.waitFor({ state: 'visible', timeout: WAIT });
  // The reviewer's agent defaults to the server's read-only `plan`; OpenCode then appends its
  // plan-mode reminder to every prompt. This test checks the agreed words exactly, so it runs
  // the reviewer with the session's agent instead.
  const agent = dialog.locator('[data-testid="agent-picker"]');
  await until(async () => (await agent.inputValue()) === 'plan', 'the reviewer agent to default to plan');
  assert.deepEqual(
    await agent.locator('option').evaluateAll((os) => os.map((o) => o.value)),
    ['', 'build', 'plan'],
    "OpenCode's hidden agents (compaction, summary, title) are not offered",
  );
  await agent.selectOption('');
  await dialog.locator('[data-testid="handoff-start"]').click({ timeout: WAIT });
  await dialog.waitFor({ state: 'detached', timeout: WAIT });
}

/** Deletes a session through the sidebar: its menu, Delete, confirm. */
async function deleteThroughSidebar(sessionId) {
  const item = page.locator(sel.item(sessionId));
  await item.hover({ timeout: WAIT });
  await item.locator('[data-testid="session-menu"]').click({ timeout: WAIT });
  const menu = page.locator('[data-testid="menu"]');
  await menu.waitFor({ state: 'visible', timeout: WAIT });
  await menu.getByRole('menuitem', { name: 'Delete' }).click({ timeout: WAIT });
  const dialog = page.locator('[data-testid="confirm-dialog"]');
  await dialog.waitFor({ state: 'visible', timeout: WAIT });
  await dialog.locator('[data-testid="confirm"]').click({ timeout: WAIT });
  await dialog.waitFor({ state: 'detached', timeout: WAIT });
  await item.waitFor({ state: 'detached', timeout: WAIT });
}

// ---- the checklist --------------------------------------------------------------------------

test('review handoff: the seed\'s 14-step manual validation checklist', { timeout: 15 * 60_000 }, async () => {
  const timings = [];
  const t0 = Date.now();
  async function step(n, name, fn) {
    const start = Date.now();
    console.log(`step ${n}: ${name}`);
    try {
      await fn();
    } catch (err) {
      err.message = `step ${n} (${name}) failed after ${Date.now() - start} ms: ${err.message}`;
      throw err;
    }
    const took = Date.now() - start;
    timings.push({ n, name, took });
    console.log(`step ${n}: ok in ${took} ms`);
  }

  let original;
  let review;
  let handoffRequest;

  await step(1, 'start /handoff-review in a normal session', async () => {
    original = await oc.json('/session', { method: 'POST', body: { title: TITLE, metadata: { ticket: 42 } } });
    assert.equal(original.parentID, undefined);
    await page.goto(cc.url);
    await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
    await page.locator(sel.item(original.id)).click({ timeout: WAIT });
    await page.locator(sel.chat(original.id)).waitFor({ state: 'visible', timeout: WAIT });
    // The handoff streams slowly enough for the progress strip to be seen.
    ms.script([{ text: HANDOFF_1, chunkDelayMs: 150 }, { text: REVIEW_1 }]);
    await startHandoff(original.id);
    await page.locator(`${sel.chat(original.id)} [data-testid="flow-progress"]`).waitFor({ state: 'visible', timeout: WAIT });
  });

  await step(2, 'a handoff assistant message appears in the original session', async () => {
    await waitReply(sel.chat(original.id), 'HANDOFF: implemented X');
    assert.equal(await assistantWith(sel.chat(original.id), 'HANDOFF:').count(), 1);
    // The visible request is shown; the hidden instructions are not.
    const user = page.locator(`${sel.chat(original.id)} [data-testid="message-user"]`);
    await user.filter({ hasText: HANDOFF_VISIBLE }).waitFor({ state: 'visible', timeout: WAIT });
    assert.equal(await user.filter({ hasText: HANDOFF_INSTRUCTIONS_START }).count(), 0, 'hidden instructions are not shown');
    // What the model got: the visible request plus the synthetic instructions, in one turn.
    handoffRequest = await nthChat(0, 0);
    assert.ok(handoffRequest.lastUserText.startsWith(`${HANDOFF_VISIBLE}\n`), 'the visible request comes first');
    assert.ok(handoffRequest.lastUserText.includes(HANDOFF_INSTRUCTIONS_START), 'the hidden instructions reach the model');
    assert.ok(handoffRequest.lastUserText.includes('Files changed, with brief purpose per file'));
    // Stored in OpenCode: visible part + synthetic part, then the reply as written.
    const stored = await messages(original.id);
    assert.deepEqual(stored.map((m) => m.info.role), ['user', 'assistant']);
    const parts = stored[0].parts.filter((p) => p.type === 'text');
    assert.equal(parts.filter((p) => !p.synthetic).map((p) => p.text).join(''), HANDOFF_VISIBLE);
    assert.ok(parts.some((p) => p.synthetic && p.text.startsWith(HANDOFF_INSTRUCTIONS_START)));
    assert.equal(visibleText(stored[1]), HANDOFF_1);
    assertNoLeaks();
  });

  await step(3, 'a normal review session in the same directory, not a child', async () => {
    const found = await until(async () => (await sessionList()).find((s) => s.title === REVIEW_TITLE), `a session titled "${REVIEW_TITLE}"`);
    review = await session(found.id);
    assert.notEqual(review.id, original.id);
    assert.equal(review.parentID, undefined, 'the review session is not a child session');
    assert.equal(review.directory, original.directory);
    assert.equal(review.title, REVIEW_TITLE);
    assert.equal((await sessionList()).length, 2);
    // It is a top-level entry in the sidebar, marked as a review.
    await page.locator(`${sel.item(review.id)} [data-testid="review-badge"]`).waitFor({ state: 'visible', timeout: WAIT });
  });

  await step(4, 'original metadata has openchamber.reviewSessionID; other keys survive', async () => {
    const s = await until(async () => {
      const cur = await session(original.id);
      return cur.metadata?.openchamber?.reviewSessionID ? cur : null;
    }, 'the review link on the original');
    assert.deepEqual(s.metadata, { ticket: 42, openchamber: { reviewSessionID: review.id } });
  });

  await step(5, 'review metadata has openchamber.kind "review" and originalSessionID', async () => {
    const s = await session(review.id);
    assert.equal(s.metadata?.openchamber?.kind, 'review');
    assert.equal(s.metadata?.openchamber?.originalSessionID, original.id);
  });

  await step(6, 'the review session opens in the context panel', async () => {
    const tab = page.locator(sel.tab(review.id));
    await tab.waitFor({ state: 'visible', timeout: WAIT });
    await tab.locator('[role="tab"][aria-selected="true"]').waitFor({ state: 'visible', timeout: WAIT });
    await page.locator(sel.panelChat(review.id)).waitFor({ state: 'visible', timeout: WAIT });
  });

  await step(7, 'the review session receives the initial handoff review prompt', async () => {
    const expected = REVIEW_PROMPT_HEAD + HANDOFF_1;
    const req = await nthChat(0, 1, toReviewer(expected));
    assert.equal(count(req.lastUserText, HANDOFF_1), 1, 'the handoff is in the prompt exactly once');
    assert.equal(count(req.lastUserText, '{{handoff}}'), 1, 'the literal {{handoff}} is preserved');
    // A fresh conversation: the reviewer sees none of the original session's turns.
    assert.deepEqual(textsOf(req, 'assistant'), []);
    assert.deepEqual(textsOf(req, 'user'), [toReviewer(expected)]);
    const stored = await waitStored(review.id, 2);
    assert.equal(visibleText(stored[0]), expected);
    // The reviewer's reply in the side panel.
    await waitReply(sel.panelChat(review.id), 'REVIEW: missing test');
    await page.locator(`${sel.panelChat(review.id)} [data-testid="message-user"]`)
      .filter({ hasText: 'Please review the changes described in this handoff.' })
      .waitFor({ state: 'visible', timeout: WAIT });
    await until(async () => (await page.locator('[data-testid="session-status"][data-status="busy"]').count()) === 0, 'no session busy');
    await screenshot(page, 'review-side-panel');
    assertNoLeaks();
  });

  const reviewReply = () => assistantWith(sel.panelChat(review.id), 'REVIEW: missing test').first();

  await step(8, 'the transfer button shows on the review\'s assistant message', async () => {
    const button = reviewReply().locator('[data-testid="transfer-button"]');
    await button.waitFor({ state: 'visible', timeout: WAIT });
    assert.equal(await button.getAttribute('data-direction'), 'toImplementer');
    assert.equal(await button.locator('use[href="#i-arrow-left-right"]').count(), 1, 'the arrow-left-right icon');
  });

  await step(9, 'sending the review feedback: the original receives the agreed prompt', async () => {
    const from = ms.requests.length;
    ms.script([{ text: IMPL_1 }]);
    const button = reviewReply().locator('[data-testid="transfer-button"]');
    await button.hover({ timeout: WAIT });
    const tooltip = reviewReply().locator('[data-testid="transfer-tooltip"]');
    await tooltip.waitFor({ state: 'visible', timeout: WAIT });
    await until(async () => Number(await tooltip.evaluate((el) => getComputedStyle(el).opacity)) === 1, 'the tooltip to be fully shown');
    await screenshot(page, 'transfer-tooltip');
    await button.click({ timeout: WAIT });

    const expected = FEEDBACK_HEAD + REVIEW_1;
    const req = await nthChat(from, 0, toImplementer(expected));
    assert.equal(count(req.lastUserText, '{{review_feedback}}'), 1, 'the literal placeholder is preserved');
    // It went to the original: its history is the handoff turn.
    assert.deepEqual(textsOf(req, 'assistant'), [HANDOFF_1]);
    assert.deepEqual(textsOf(req, 'user').slice(-1), [toImplementer(expected)]);
    const stored = await waitStored(original.id, 4);
    assert.equal(visibleText(stored[2]), expected);
    await until(async () => (await toasts()).some((t) => t.level === 'success' && /feedback/i.test(t.text)), 'the success toast');
    await waitReply(sel.chat(original.id), 'IMPLEMENTED:');
    assertNoLeaks();
  });

  await step(10, 'the transfer button shows on the original\'s assistant messages', async () => {
    const replies = page.locator(`${sel.chat(original.id)} [data-testid="message-assistant"]`);
    const buttons = page.locator(`${sel.chat(original.id)} [data-testid="transfer-button"]`);
    await until(async () => (await buttons.count()) === 2 && (await replies.count()) === 2, 'two transfer buttons on the two replies');
    for (let i = 0; i < 2; i++) {
      assert.equal(await buttons.nth(i).getAttribute('data-direction'), 'toReviewer');
    }
    await assistantWith(sel.chat(original.id), 'IMPLEMENTED:').locator('[data-testid="transfer-button"]')
      .waitFor({ state: 'visible', timeout: WAIT });
  });

  await step(11, 'sending the implementation response: the review receives the agreed prompt, its tab is focused', async () => {
    // Close the review tab and collapse the panel first, so bringing it back is the transfer's doing.
    await page.locator(`${sel.tab(review.id)} [data-testid="close-tab"]`).click({ timeout: WAIT });
    await page.locator(sel.tab(review.id)).waitFor({ state: 'detached', timeout: WAIT });
    await page.locator('[data-testid="toggle-panel"]').click({ timeout: WAIT });
    await page.locator('[data-testid="context-panel"]').waitFor({ state: 'detached', timeout: WAIT });
    const from = ms.requests.length;
    ms.script([{ text: REVIEW_2 }]);
    await assistantWith(sel.chat(original.id), 'IMPLEMENTED:').locator('[data-testid="transfer-button"]').click({ timeout: WAIT });

    const expected = RESPONSE_HEAD + IMPL_1;
    const req = await nthChat(from, 0, toReviewer(expected));
    assert.equal(count(req.lastUserText, '{{implementation_response}}'), 1, 'the literal placeholder is preserved');
    // It went to the review session: its history is the first review turn.
    assert.deepEqual(textsOf(req, 'assistant'), [REVIEW_1]);
    assert.deepEqual(textsOf(req, 'user'), [toReviewer(REVIEW_PROMPT_HEAD + HANDOFF_1), toReviewer(expected)]);
    await page.locator(`${sel.tab(review.id)} [role="tab"][aria-selected="true"]`).waitFor({ state: 'visible', timeout: WAIT });
    await page.locator(sel.panelChat(review.id)).waitFor({ state: 'visible', timeout: WAIT });
    const stored = await waitStored(review.id, 4);
    assert.equal(visibleText(stored[2]), expected);
    await until(async () => (await toasts()).some((t) => t.level === 'success' && /response/i.test(t.text)), 'the success toast');
    await waitReply(sel.panelChat(review.id), 'REVIEW-2:');
    assertNoLeaks();
  });

  await step(12, '/handoff-review again reuses the review session', async () => {
    const before = (await sessionList()).map((s) => s.id).sort();
    const from = ms.requests.length;
    ms.script([{ text: HANDOFF_2 }, { text: REVIEW_3 }]);
    await startHandoff(original.id);

    const again = await nthChat(from, 0);
    assert.ok(again.lastUserText.startsWith(`${HANDOFF_VISIBLE}\n${HANDOFF_INSTRUCTIONS_START}`), 'a new handoff request first');
    const expected = REVIEW_PROMPT_HEAD + HANDOFF_2;
    const req = await nthChat(from, 1, toReviewer(expected));
    // Same reviewer conversation, continued.
    assert.deepEqual(textsOf(req, 'assistant'), [REVIEW_1, REVIEW_2]);
    const stored = await waitStored(review.id, 6);
    assert.deepEqual((await sessionList()).map((s) => s.id).sort(), before, 'no new session');
    const o = await session(original.id);
    assert.deepEqual(o.metadata, { ticket: 42, openchamber: { reviewSessionID: review.id } });
    assert.equal((await messages(original.id)).length, 6, 'the original got the second handoff turn');
    assert.equal(visibleText(stored[4]), expected);
    await page.locator(`${sel.tab(review.id)} [role="tab"][aria-selected="true"]`).waitFor({ state: 'visible', timeout: WAIT });
    await waitReply(sel.panelChat(review.id), 'REVIEW-3:');
    assertNoLeaks();
  });

  await step(13, 'deleting the review session removes the link from the original', async () => {
    await until(async () => (await page.locator('[data-testid="session-status"][data-status="busy"]').count()) === 0, 'no session busy');
    await deleteThroughSidebar(review.id);
    const gone = await oc.fetch(`/session/${review.id}`);
    assert.equal(gone.status, 404, 'the review session is deleted in OpenCode');
    const o = await session(original.id);
    assert.equal(o.metadata?.ticket, 42, 'unrelated metadata survives');
    assert.equal(o.metadata?.openchamber?.reviewSessionID, undefined, 'the link is removed');
    assert.deepEqual((await sessionList()).map((s) => s.id), [original.id]);
    // The UI follows: no review tab, no transfer buttons on the original any more.
    await page.locator(sel.tab(review.id)).waitFor({ state: 'detached', timeout: WAIT });
    await until(async () => (await page.locator(`${sel.chat(original.id)} [data-testid="transfer-button"]`).count()) === 0, 'the transfer buttons to go');
    await assertNoErrorToast();
  });

  await step(14, 'deleting the original session: no crash', async () => {
    await deleteThroughSidebar(original.id);
    const gone = await oc.fetch(`/session/${original.id}`);
    assert.equal(gone.status, 404);
    assert.deepEqual(await sessionList(), []);
    await page.locator(sel.chat(original.id)).waitFor({ state: 'detached', timeout: WAIT });
    await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
    await assertNoErrorToast();
    assert.deepEqual(pageErrors, [], 'no page errors');
    assert.doesNotMatch(cc.output(), /panicked/);
    const res = await fetch(`${cc.base}/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${cc.token}` },
      body: JSON.stringify({ cmd: 'snapshot' }),
    });
    assert.equal(res.status, 200, 'Crosscheck still answers');
    assert.deepEqual((await res.json()).sessions, []);
  });

  // Throughout: everything the model received, once more, all of it.
  assertNoLeaks();
  assert.equal(chats().length, 6, 'six model turns: handoff, review, feedback, response, handoff, review');
  assert.ok(handoffRequest.lastUserText.includes(HANDOFF_INSTRUCTIONS_START));

  const total = Date.now() - t0;
  console.log('step timings:');
  for (const { n, name, took } of timings) console.log(`  ${String(n).padStart(2)}. ${(took / 1000).toFixed(1).padStart(6)} s  ${name}`);
  console.log(`total: ${(total / 1000).toFixed(1)} s`);
});
