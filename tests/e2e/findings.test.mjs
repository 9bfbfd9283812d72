// The Findings list and "Send selected findings", end to end in headless Chromium against the
// real `opencode serve` and the scripted model: a manual review whose reply has a blocker, a
// major and a nit shows three rows, the severity and status filters work, the picker sends the
// blocker and the major but not the nit (read back from the implementer's session on the
// server), Esc sends nothing, and the list follows the next round's statuses live.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { screenshot } from '../support/browser.mjs';
import { until as untilCondition } from '../support/page.mjs';
import { startStack } from '../support/stack.mjs';

const PASSWORD = 'e2e-secret';
const WAIT = 60_000;
const FEEDBACK_HEAD = 'Another agent reviewed your changes and left the feedback below.\n\n'
  + 'Please review the feedback, resolve the relevant issues, and explain what you changed.\n\n';
const ROUND_1 = 'Three things.\n\nFINDINGS\n'
  + '- [F1] blocker src/parse.rs:12 — the last line is dropped when it has no newline\n'
  + '- [F2] major src/parse.rs:30 — a CR without LF is kept in the field\n'
  + '- [F3] nit src/parse.rs:1 — prefer a doc comment on parse()\n'
  + 'VERDICT: FLAGS (3)';
const ANSWER = 'IMPLEMENTED: kept the last line and stripped lone CRs.\n\n- [F1] FIXED\n- [F2] FIXED';
const ROUND_2 = 'Better.\n\nFINDINGS\n- [F1] FIXED\n- [F2] OPEN — a lone CR at the end is still kept\n- [F3] OPEN\nVERDICT: FLAGS (2)';

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

/** Sends `text` to a session through OpenCode's API and waits for its turn to end. */
async function prompt(sessionId, text) {
  const idle = events.waitForIdle(sessionId);
  await oc.fetch(`/session/${sessionId}/prompt_async`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ parts: [{ type: 'text', text }] }),
  });
  await idle;
}

/** A linked pair made through OpenCode's API, the reviewer's first reply already in. */
async function linkedPair(title) {
  const original = await oc.json('/session', { method: 'POST', body: { title } });
  const review = await oc.json('/session', {
    method: 'POST',
    body: { title: `Review: ${title}`, metadata: { openchamber: { kind: 'review', originalSessionID: original.id } } },
  });
  await oc.json(`/session/${original.id}`, { method: 'PATCH', body: { metadata: { openchamber: { reviewSessionID: review.id } } } });
  ms.script([{ text: ROUND_1 }]);
  await prompt(review.id, 'Please review the handoff.');
  return { original, review };
}

/** The user-visible text of a session's user messages on the server, oldest first. */
async function userTexts(sessionId) {
  const messages = await oc.json(`/session/${sessionId}/message`);
  return messages
    .filter((m) => m.info.role === 'user')
    .map((m) => m.parts.filter((p) => p.type === 'text' && !p.synthetic).map((p) => p.text).join('\n'));
}

test('the Findings list filters and follows the rounds, and the picker sends the blocker and the major but not the nit', { timeout: 6 * 60_000 }, async () => {
  const t0 = Date.now();
  const { original, review } = await linkedPair('Parse CRLF files');
  await page.setViewportSize({ width: 1280, height: 860 });
  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
  await page.locator(sel.item(review.id)).click({ timeout: WAIT });
  // The centre's chat (a review session opens in the side panel too).
  const chat = page.locator(sel.chat(review.id)).first();
  await chat.waitFor({ state: 'visible', timeout: WAIT });

  // Three rows, in id order, with severity, location, title and status.
  const list = chat.locator('[data-testid="findings-list"]');
  const rows = list.locator('[data-testid="finding-row"]');
  await until(async () => (await rows.count()) === 3, 'three findings rows');
  const shown = async () => rows.evaluateAll((els) => els.map((e) => `${e.dataset.findingId}:${e.dataset.severity}:${e.dataset.status}`));
  assert.deepEqual(await shown(), ['F1:blocker:open', 'F2:major:open', 'F3:nit:open']);
  assert.match(await rows.first().textContent(), /F1\s*Blocker\s*the last line is dropped.*src\/parse\.rs:12\s*Open/);
  assert.match(await list.locator('[data-testid="findings-open-count"]').textContent(), /3 open of 3/);

  // The filters are real selects with accessible names.
  const severity = list.getByLabel('Severity');
  await severity.selectOption('nit');
  await until(async () => (await rows.count()) === 1, 'only the nit');
  assert.deepEqual(await shown(), ['F3:nit:open']);
  await severity.selectOption('blocker');
  await until(async () => (await shown()).join() === 'F1:blocker:open', 'only the blocker');
  await severity.selectOption('all');
  await list.getByLabel('Status').selectOption('fixed');
  await list.locator('[data-testid="findings-none-match"]').waitFor({ state: 'visible', timeout: WAIT });
  await list.getByLabel('Status').selectOption('all');
  await until(async () => (await rows.count()) === 3, 'all three again');

  // The picker on the reviewer's turn: blockers and majors checked, the nit not.
  const reply = chat.locator('[data-testid="message-assistant"]').filter({ hasText: 'Three things.' }).first();
  const open = reply.locator('[data-testid="send-findings-button"]');
  await open.waitFor({ state: 'visible', timeout: WAIT });
  await open.click({ timeout: WAIT });
  const dialog = page.locator('[data-testid="send-findings-dialog"]');
  await dialog.waitFor({ state: 'visible', timeout: WAIT });
  const checks = () => dialog.locator('[data-testid="send-finding"]').evaluateAll((els) => els.map((e) => `${e.dataset.findingId}:${e.querySelector('input').checked}`));
  assert.deepEqual(await checks(), ['F1:true', 'F2:true', 'F3:false']);
  await screenshot(page, 'send-findings');

  // Esc closes it and sends nothing; the choice is still there when it opens again.
  const before = ms.requests.length;
  await dialog.getByRole('checkbox', { name: /F3/ }).check();
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached', timeout: WAIT });
  await open.click({ timeout: WAIT });
  await dialog.waitFor({ state: 'visible', timeout: WAIT });
  assert.deepEqual(await checks(), ['F1:true', 'F2:true', 'F3:true']);
  await dialog.getByRole('checkbox', { name: /F3/ }).uncheck();
  assert.equal(chats(before).length, 0, 'Esc sent nothing');
  assert.deepEqual(await userTexts(original.id), [], 'the implementer got nothing yet');

  // Send: the implementer's session on the server has the blocker and the major, not the nit.
  ms.script([{ text: ANSWER }]);
  const idle = events.waitForIdle(original.id);
  await dialog.locator('[data-testid="send-findings-send"]').click({ timeout: WAIT });
  await dialog.waitFor({ state: 'detached', timeout: WAIT });
  await idle;
  const received = await userTexts(original.id);
  assert.equal(received.length, 1, 'one prompt reached the implementer');
  assert.equal(
    received[0],
    `${FEEDBACK_HEAD}FINDINGS\n- [F1] blocker src/parse.rs:12 — the last line is dropped when it has no newline\n- [F2] major src/parse.rs:30 — a CR without LF is kept in the field`,
  );
  assert.ok(!received[0].includes('F3'), 'the nit stayed behind');
  // The model saw the hidden answer-by-id instruction after the seed's words.
  const sent = chats(before)[0];
  assert.ok(sent.lastUserText.startsWith(received[0]), sent.lastUserText);
  assert.match(sent.lastUserText, /\[F1\] FIXED/);
  // The turn carries the sent mark, as a one-click transfer would.
  await reply.locator('[data-testid="transfer-sent"]').waitFor({ state: 'visible', timeout: WAIT });

  // Round 2 (the reviewer's next reply, in manual mode): the list follows the push.
  ms.script([{ text: ROUND_2 }]);
  await prompt(review.id, 'The implementer answered: F1 and F2 fixed.');
  await until(async () => (await shown()).join() === 'F1:blocker:fixed,F2:major:open,F3:nit:open', 'the round 2 statuses');
  assert.match(await list.locator('[data-testid="findings-open-count"]').textContent(), /2 open of 3/);

  // Rows expand from the keyboard to their round history.
  const f2 = list.locator('[data-testid="finding-row"][data-finding-id="F2"] [data-testid="finding-expand"]');
  await f2.focus();
  await page.keyboard.press('Enter');
  assert.equal(await f2.getAttribute('aria-expanded'), 'true');
  const history = list.locator('[data-finding-id="F2"] [data-testid="finding-round"]');
  await until(async () => (await history.count()) === 2, 'two rounds in F2’s history');
  assert.match(await history.nth(0).textContent(), /Round 1\s*Reviewer: Open/);
  assert.match(await history.nth(1).textContent(), /Round 2\s*Reviewer: Open — a lone CR at the end is still kept/);
  await screenshot(page, 'findings-list');
  await page.keyboard.press('Space');
  assert.equal(await f2.getAttribute('aria-expanded'), 'false');
  const errors = (await page.evaluate(() => window.__toasts)).filter((t) => t.level === 'error');
  assert.deepEqual(errors, []);
  assert.deepEqual(pageErrors, []);
  console.log(`findings list and picker: ok in ${Date.now() - t0} ms`);
});

test('a reviewer reply without findings offers no picker, and the list says it is empty', { timeout: 3 * 60_000 }, async () => {
  const original = await oc.json('/session', { method: 'POST', body: { title: 'No findings here' } });
  const review = await oc.json('/session', {
    method: 'POST',
    body: { title: 'Review: No findings here', metadata: { openchamber: { kind: 'review', originalSessionID: original.id } } },
  });
  await oc.json(`/session/${original.id}`, { method: 'PATCH', body: { metadata: { openchamber: { reviewSessionID: review.id } } } });
  ms.script([{ text: 'REVIEW: looks fine to me.' }]);
  await prompt(review.id, 'Please review the handoff.');
  await page.goto(cc.url);
  await page.locator(sel.item(review.id)).click({ timeout: WAIT });
  const chat = page.locator(sel.chat(review.id)).first();
  await chat.locator('[data-testid="findings-empty"]').waitFor({ state: 'visible', timeout: WAIT });
  const reply = chat.locator('[data-testid="message-assistant"]').filter({ hasText: 'REVIEW:' }).first();
  await reply.locator('[data-testid="transfer-button"]').waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await reply.locator('[data-testid="send-findings-button"]').count(), 0);
  assert.deepEqual(pageErrors, []);
});

test('Settings → Reviewer edits the shell commands, shows a refusal at the field and resets to the defaults', { timeout: 3 * 60_000 }, async () => {
  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
  const defaults = await cc.api({ cmd: 'defaultSettings' });
  await page.locator('[data-testid="open-settings"]').click({ timeout: WAIT });
  const section = page.locator('[data-testid="settings-reviewer-shell"]');
  const field = section.getByLabel('Shell commands a read-only reviewer may run');
  await field.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await field.inputValue(), defaults.reviewerShellAllow.join('\n'));
  assert.equal(await section.locator('[data-testid="settings-reviewer-read-only"]').isChecked(), true);

  // An edit with a blank line is saved without it.
  await field.fill('git status*\n\ncargo tree*\n');
  await section.locator('[data-testid="settings-shell-allow-save"]').click();
  await until(async () => (await cc.api({ cmd: 'snapshot' })).settings.reviewerShellAllow.join() === 'git status*,cargo tree*', 'the edited list saved');

  // A pattern that allows everything is refused at the field; the text and the saved list stay.
  await field.fill('git status*\n*');
  await section.locator('[data-testid="settings-shell-allow-save"]').click();
  const error = section.locator('[data-testid="settings-shell-allow-error"]');
  await error.waitFor({ state: 'visible', timeout: WAIT });
  assert.match(await error.textContent(), /Not saved: a reviewer shell pattern must name a command/);
  assert.equal(await field.getAttribute('aria-invalid'), 'true');
  assert.equal(await field.inputValue(), 'git status*\n*');
  assert.deepEqual((await cc.api({ cmd: 'snapshot' })).settings.reviewerShellAllow, ['git status*', 'cargo tree*']);

  // Reset to defaults brings the backend's list back, in the field and saved.
  await section.locator('[data-testid="settings-shell-allow-reset"]').click();
  await until(async () => (await field.inputValue()) === defaults.reviewerShellAllow.join('\n'), 'the defaults in the field');
  assert.equal(await error.count(), 0);
  assert.deepEqual((await cc.api({ cmd: 'snapshot' })).settings.reviewerShellAllow, defaults.reviewerShellAllow);
  await page.keyboard.press('Escape');
  assert.deepEqual(pageErrors, []);
});
