// Deciding a review loop stopped on a dispute, end to end in headless Chromium against real
// OpenCode and the scripted model server: from the finding itself in the review tab's Findings
// list ("keep it with a note": the implementer receives the note in words, checked through
// OpenCode's API) and from the loop strip ("one more round": the loop runs another round).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launchBrowser, screenshot } from '../support/browser.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';
import { newRecordedPage, until as untilCondition } from '../support/page.mjs';

const PASSWORD = 'e2e-secret';
const WAIT = 60_000;

const HANDOFF = 'HANDOFF: greet() now takes a name.';
const ROUND_1 = 'FINDINGS\n- [F1] major src/lib.rs:3 — greet() panics on an empty name\nVERDICT: FLAGS (1)';
const DISPUTE = 'IMPLEMENTED: nothing to change.\n\n- [F1] DISPUTED — the caller never passes an empty name: `if name.is_empty() { return None; }`';
const KEPT_OPEN = 'FINDINGS\n- [F1] OPEN — callers pass user input\nVERDICT: FLAGS (1)';
const FIXED = 'IMPLEMENTED: guarded the empty name after all.\n\n- [F1] FIXED';
const CLEAN = 'FINDINGS\n- [F1] FIXED\nREVIEWED src/lib.rs\nVERDICT: CLEAN';

let ms;
let oc;
let cc;
let browser;
let page;
let pageErrors;

before(async () => {
  ms = await startModelServer();
  oc = await startOpencode({ modelUrl: ms.baseURL, password: PASSWORD });
  cc = await startCrosscheck({ opencodeUrl: oc.url, password: PASSWORD });
  browser = await launchBrowser({ viewport: { width: 1280, height: 860 } });
  ({ page, pageErrors } = await newRecordedPage(browser));
});

after(async () => {
  await browser?.close();
  await cc?.stop();
  await oc?.dispose();
  await ms?.close();
});

const until = (probe, what, timeoutMs = WAIT) => untilCondition(probe, what, timeoutMs);
const chat = (id) => `[data-testid="chat"][data-session-id="${id}"]`;
const row = (id) => page.locator(`[data-testid="session-item"][data-session-id="${id}"]`);

/** The pair's newest loop as the backend has it now. */
async function loopOf(originalId) {
  const loops = await cc.api({ cmd: 'listLoops' });
  return loops.find((l) => l.originalSessionId === originalId);
}

/** The texts of a session's user messages, as OpenCode holds them. */
async function userTexts(sessionId) {
  const messages = await oc.json(`/session/${sessionId}/message`);
  return messages
    .filter((m) => m.info.role === 'user')
    .map((m) => m.parts.filter((p) => p.type === 'text' && !p.synthetic).map((p) => p.text).join('\n'));
}

/** Runs /handoff-review with the automatic loop on a new session, scripted so that the loop
 * stops on F1's dispute; answers the session and the stopped strip. */
async function loopStoppedOnDispute(title) {
  const original = await oc.json('/session', { method: 'POST', body: { title } });
  ms.script([{ text: HANDOFF }, { text: ROUND_1 }, { text: DISPUTE }, { text: KEPT_OPEN }]);
  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
  await row(original.id).click({ timeout: WAIT });
  const input = page.locator(`${chat(original.id)} [data-testid="composer-input"]`);
  await input.waitFor({ state: 'visible', timeout: WAIT });
  await input.click();
  await input.fill('/handoff-review');
  const menu = page.locator(`${chat(original.id)} [data-testid="command-menu"]`);
  await menu.waitFor({ state: 'visible', timeout: WAIT });
  await menu.locator('[data-testid="command-item"][data-name="handoff-review"]').click({ timeout: WAIT });
  await until(async () => ((await input.inputValue()).trim() === '/handoff-review' ? true : null), 'the picked command');
  await input.press('Enter');
  const dialog = page.locator('[data-testid="handoff-dialog"]');
  await dialog.waitFor({ state: 'visible', timeout: WAIT });
  await dialog.getByLabel('Automatic review loop').check();
  await dialog.locator('[data-testid="handoff-start"]').click({ timeout: WAIT });
  await dialog.waitFor({ state: 'detached', timeout: WAIT });
  const stopped = page.locator(`${chat(original.id)} [data-testid="loop-progress"][data-state="stopped"]`);
  await stopped.waitFor({ state: 'visible', timeout: 2 * WAIT });
  assert.equal(await stopped.getAttribute('data-reason'), 'disputed');
  const loop = await loopOf(original.id);
  assert.deepEqual(loop.stop.findingIds, ['F1']);
  return { original, loop, stopped };
}

test('a loop stopped on a dispute is decided on the finding: kept with a note the implementer receives', { timeout: 6 * 60_000 }, async () => {
  const { original, loop } = await loopStoppedOnDispute('Greet kept');
  const review = loop.reviewSessionId;
  // The review tab (the pair view's side panel) lists F1 with its decision, reached by keyboard.
  const finding = page.locator(`${chat(review)} [data-testid="finding-row"][data-finding-id="F1"]`);
  await finding.waitFor({ state: 'visible', timeout: WAIT });
  const decide = finding.locator('[data-testid="finding-decide"]');
  await decide.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await decide.locator('[data-testid="loop-decide-withdraw"]').count(), 1, 'a dispute can be accepted');
  assert.equal(await decide.locator('[data-testid="loop-decide-round"]').count(), 1, 'one more round is offered');
  const note = decide.locator('[data-testid="loop-decide-note"]');
  await finding.locator('[data-testid="finding-expand"]').focus();
  await page.keyboard.press('Tab');
  assert.equal(await decide.locator('[data-testid="loop-decide-withdraw"]').evaluate((el) => el === document.activeElement), true, 'Tab reaches the decision');
  await page.keyboard.press('Tab');
  assert.equal(await note.evaluate((el) => el === document.activeElement), true, 'then the note');
  const words = 'Keep F1: greet() is called with user input from the form.';
  await page.keyboard.type(words);
  await screenshot(page, 'loop-decide-finding');

  ms.script([{ text: 'Understood, I will guard the empty name.' }]);
  const prompts = ms.chatRequests().length;
  await page.keyboard.press('Enter');
  // The implementer received the note in words (OpenCode's own record of its messages).
  await until(async () => ((await userTexts(original.id)).some((t) => t.includes(words)) ? true : null), 'the note in the implementer\'s transcript');
  await until(() => (ms.chatRequests().length > prompts ? true : null), 'the implementer\'s turn');
  const sent = (await userTexts(original.id)).find((t) => t.includes(words));
  assert.match(sent, /F1/, 'the note names the finding');
  // Decided: the finding no longer offers the decision, and stays open (it was kept).
  await decide.waitFor({ state: 'detached', timeout: WAIT });
  const view = await cc.api({ cmd: 'listFindings', sessionId: original.id });
  assert.notEqual(view.findings.find((f) => f.id === 'F1')?.status, 'withdrawn', 'kept, not withdrawn');
  assert.deepEqual(pageErrors, []);
});

test('a loop stopped on a dispute is decided from the strip: one more round runs', { timeout: 6 * 60_000 }, async () => {
  const { original, loop, stopped } = await loopStoppedOnDispute('Greet once more');
  const round = stopped.locator('[data-testid="loop-decide-round"]');
  await round.waitFor({ state: 'visible', timeout: WAIT });
  await screenshot(page, 'loop-decide-strip');

  const from = ms.chatRequests().length;
  ms.script([{ text: FIXED }, { text: CLEAN }]);
  await round.focus();
  await page.keyboard.press('Enter');
  // Another round runs: a new loop of the same pair, the implementer and the reviewer answer
  // again, and this time it ends clean.
  const next = await until(async () => {
    const l = await loopOf(original.id);
    return l && l.id !== loop.id ? l : null;
  }, 'a new loop');
  assert.equal(next.reviewSessionId, loop.reviewSessionId);
  const ended = await until(async () => {
    const l = await loopOf(original.id);
    return l?.id === next.id && l.ended ? l : null;
  }, 'the extra round to end', 2 * WAIT);
  assert.equal(ended.stop?.reason, 'clean', JSON.stringify(ended.stop));
  assert.ok(ms.chatRequests().length >= from + 2, 'the implementer and the reviewer were asked again');
  const texts = await userTexts(original.id);
  assert.ok(texts.length >= 2, 'the implementer got the findings again');
  const view = await cc.api({ cmd: 'listFindings', sessionId: original.id });
  assert.equal(view.findings.find((f) => f.id === 'F1')?.status, 'fixed');
  await page.locator(`${chat(original.id)} [data-testid="loop-progress"][data-reason="clean"]`).waitFor({ state: 'visible', timeout: WAIT });
  assert.deepEqual(pageErrors, []);
});
