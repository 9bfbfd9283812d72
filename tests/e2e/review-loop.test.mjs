// The automatic review loop against the real `opencode serve` with the scripted model: a
// two-round loop that ends CLEAN with the nit never forwarded (and the reviewer offered no
// edit or write tool), a stalled loop stopped before its cap, and a loop that resumes after
// `crosscheck serve` is killed in the middle of it, and a reviewer quoting the implementer's
// `VERDICT: CLEAN` while it disagrees does not end the loop clean.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { newRecordedPage, until as untilCondition } from '../support/page.mjs';
import { launchBrowser, screenshot } from '../support/browser.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';

const PASSWORD = 'e2e-secret';
const WAIT = 60_000;

const HANDOFF = 'HANDOFF: greet() now takes a name; tests added.';
const ROUND_1 = 'Two things.\n\nFINDINGS\n- [F1] major src/lib.rs:3 — greet() panics on an empty name\n- [F2] nit src/lib.rs:1 — prefer a doc comment\nVERDICT: FLAGS (2)';
const FIXED_F1 = 'IMPLEMENTED: guarded the empty name and added a test.\n\n- [F1] FIXED';
const CLEAN_2 = 'FINDINGS\n- [F1] FIXED\nREVIEWED src/lib.rs\nVERDICT: CLEAN';
const CLAIMED_CLEAN = 'IMPLEMENTED: guarded the empty name.\n\n- [F1] FIXED\nVERDICT: CLEAN';
const QUOTED_CLEAN = 'The implementer answered:\n\n> - [F1] FIXED\n> VERDICT: CLEAN\n\nI disagree: greet("") still panics.';
const STILL_OPEN = 'FINDINGS\n- [F1] OPEN — the guard is still missing\nVERDICT: FLAGS (1)';
const FEEDBACK_HEAD = 'Another agent reviewed your changes and left the feedback below.';
const RESPONSE_HEAD = 'The agent implementing the changes has responded to the previous review feedback.';

let ms;
let oc;
let cc;
let browser;
let page;

before(async () => {
  ms = await startModelServer();
  oc = await startOpencode({ modelUrl: ms.baseURL, password: PASSWORD });
  cc = await startCrosscheck({ opencodeUrl: oc.url, password: PASSWORD });
  browser = await launchBrowser();
  ({ page } = await newRecordedPage(browser));
});

after(async () => {
  await browser?.close();
  await cc?.stop();
  await oc?.dispose();
  await ms?.close();
});

const until = (probe, what, timeoutMs = WAIT) => untilCondition(probe, what, timeoutMs);
const chats = (from = 0) => ms.requests.slice(from).filter((r) => r.kind === 'chat');
const toolNames = (r) => (r.tools ?? []).map((t) => t.function?.name ?? t.name).sort();
const sel = {
  chat: (id) => `[data-testid="chat"][data-session-id="${id}"]`,
  item: (id) => `[data-testid="session-item"][data-session-id="${id}"]`,
};

/** The pair's loop as the backend has it now. */
async function loopOf(client, originalId) {
  const loops = await client.api({ cmd: 'listLoops' });
  return loops.find((l) => l.originalSessionId === originalId);
}

/** Opens the session, runs /handoff-review with "Automatic review loop" ticked. */
async function startLoopedHandoff(sessionId) {
  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
  await page.locator(sel.item(sessionId)).click({ timeout: WAIT });
  const input = page.locator(`${sel.chat(sessionId)} [data-testid="composer-input"]`);
  await input.waitFor({ state: 'visible', timeout: WAIT });
  await input.click();
  await input.fill('/handoff-review');
  const menu = page.locator(`${sel.chat(sessionId)} [data-testid="command-menu"]`);
  await menu.waitFor({ state: 'visible', timeout: WAIT });
  await menu.locator('[data-testid="command-item"][data-name="handoff-review"]').click({ timeout: WAIT });
  await until(async () => (await input.inputValue()).trim() === '/handoff-review', 'the picked command');
  await input.press('Enter');
  const dialog = page.locator('[data-testid="handoff-dialog"]');
  await dialog.waitFor({ state: 'visible', timeout: WAIT });
  const box = dialog.getByLabel('Automatic review loop');
  await box.check();
  assert.equal(await dialog.locator('[data-testid="handoff-loop-cap"]').inputValue(), '5', 'the cap defaults to 5');
  await dialog.locator('[data-testid="handoff-start"]').click({ timeout: WAIT });
  await dialog.waitFor({ state: 'detached', timeout: WAIT });
}

test('a two-round loop ends CLEAN, the nit is never forwarded, the reviewer cannot edit', async () => {
  const started = Date.now();
  const original = await oc.json('/session', { method: 'POST', body: { title: 'Greet by name' } });
  const from = ms.requests.length;
  // Round 2's review is slow enough for the progress to be seen (and photographed).
  ms.script([{ text: HANDOFF }, { text: ROUND_1 }, { text: FIXED_F1 }, { text: CLEAN_2, delayMs: 2500 }]);
  await startLoopedHandoff(original.id);

  const progress = page.locator(`${sel.chat(original.id)} [data-testid="loop-progress"]`);
  await page.locator(`${sel.chat(original.id)} [data-testid="loop-progress"][data-round="2"][data-state="running"]`)
    .waitFor({ state: 'visible', timeout: WAIT })
    .catch(async (err) => {
      err.message += `\nloop: ${JSON.stringify(await loopOf(cc, original.id))}\nrequests: ${chats(from).length}`;
      throw err;
    });
  await page.locator(`${sel.item(original.id)} [data-testid="loop-badge"]`).waitFor({ state: 'visible', timeout: WAIT });
  assert.match(await progress.innerText(), /Round 2 of 5/);
  await screenshot(page, 'loop-progress');

  await page.locator(`${sel.chat(original.id)} [data-testid="loop-progress"][data-state="stopped"][data-reason="clean"]`)
    .waitFor({ state: 'visible', timeout: WAIT });
  const loop = await loopOf(cc, original.id);
  assert.equal(loop.stop.reason, 'clean');
  assert.equal(loop.round, 2);

  const requests = chats(from);
  assert.equal(requests.length, 4, 'handoff, review, feedback, response: each once');
  const [handoff, review1, feedback, response] = requests;
  assert.ok(feedback.lastUserText.startsWith(FEEDBACK_HEAD), 'the seed words to the implementer');
  assert.ok(feedback.lastUserText.includes('[F1] major src/lib.rs:3'), 'the major is forwarded');
  assert.ok(!feedback.lastUserText.includes('doc comment') && !feedback.lastUserText.includes('[F2] nit'), 'the nit is not');
  assert.ok(response.lastUserText.startsWith(`${RESPONSE_HEAD}\n\nPlease review the latest state again and report any remaining issues.\n\n${FIXED_F1}`));
  assert.ok(review1.lastUserText.includes('VERDICT: CLEAN'), 'the findings format reaches the reviewer');
  for (const r of [review1, response]) {
    const tools = toolNames(r);
    assert.ok(!tools.includes('edit') && !tools.includes('write'), `reviewer tools: ${tools}`);
  }
  for (const r of [handoff, feedback]) {
    const tools = toolNames(r);
    assert.ok(tools.includes('edit') && tools.includes('write'), `implementer tools: ${tools}`);
  }
  const findings = await cc.api({ cmd: 'listFindings', sessionId: original.id });
  // The nit was never forwarded nor mentioned again: CLEAN leaves it as it was.
  assert.deepEqual(findings.findings.map((f) => [f.id, f.severity, f.status]), [['F1', 'major', 'fixed'], ['F2', 'nit', 'open']]);
  assert.ok(findings.findings[1].history.every((h) => h.round === 1), JSON.stringify(findings.findings[1].history));
  console.log(`two-round loop: ${Date.now() - started} ms`);
});

test('a loop whose finding stays open stops as stalled before its cap', async () => {
  const started = Date.now();
  const original = await oc.json('/session', { method: 'POST', body: { title: 'Greet stalled' } });
  const from = ms.requests.length;
  ms.script([{ text: HANDOFF }, { text: ROUND_1 }, { text: FIXED_F1 }, { text: STILL_OPEN }]);
  await startLoopedHandoff(original.id);
  const stopped = page.locator(`${sel.chat(original.id)} [data-testid="loop-progress"][data-state="stopped"]`);
  await stopped.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await stopped.getAttribute('data-reason'), 'stalled');
  assert.equal(await stopped.getAttribute('data-round'), '2', 'round 2 of 5: before the cap');
  assert.match(await stopped.locator('[data-testid="loop-reason"]').innerText(), /Stalled/);
  const loop = await loopOf(cc, original.id);
  assert.match(loop.stop.detail, /stalled/);
  assert.deepEqual(loop.stop.findingIds, ['F1']);
  assert.equal(chats(from).length, 4, 'nothing went to the implementer after the stall');
  await page.locator(`${sel.item(original.id)} [data-testid="loop-badge"]`).waitFor({ state: 'detached', timeout: WAIT });
  console.log(`stalled loop: ${Date.now() - started} ms`);
});

test('the loop resumes after crosscheck serve is killed in the middle of it', async () => {
  const started = Date.now();
  const original = await oc.json('/session', { method: 'POST', body: { title: 'Greet resumed' } });
  const from = ms.requests.length;
  // The implementer's answer takes a while: crosscheck is killed while it runs.
  ms.script([{ text: HANDOFF }, { text: ROUND_1 }, { text: FIXED_F1, delayMs: 4000 }, { text: CLEAN_2 }]);
  await cc.api({ cmd: 'startHandoffReview', sessionId: original.id, reviewLoop: { maxRounds: 5 } });
  await until(async () => (await loopOf(cc, original.id))?.phase === 'implementing', 'the implementer\'s turn');
  await until(() => chats(from).length >= 3, 'the feedback reached the model');
  const { dataDir, configDir } = cc;
  process.kill(-cc.pid, 'SIGKILL');
  await cc.stop();
  cc = await startCrosscheck({ opencodeUrl: oc.url, password: PASSWORD, dataDir, configDir });
  const end = await until(async () => {
    const l = await loopOf(cc, original.id);
    return l?.ended ? l : null;
  }, 'the resumed loop to end');
  assert.equal(end.stop.reason, 'clean', JSON.stringify(end.stop));
  const requests = chats(from);
  assert.equal(requests.filter((r) => r.lastUserText.startsWith(FEEDBACK_HEAD)).length, 1, 'one feedback');
  assert.equal(requests.filter((r) => r.lastUserText.startsWith(RESPONSE_HEAD)).length, 1, 'one response');
  console.log(`resumed loop: ${Date.now() - started} ms`);
});

test('a reviewer quoting the implementer\'s VERDICT: CLEAN while it disagrees does not end the loop clean', async () => {
  const original = await oc.json('/session', { method: 'POST', body: { title: 'Greet quoted' } });
  const from = ms.requests.length;
  ms.script([{ text: HANDOFF }, { text: ROUND_1 }, { text: CLAIMED_CLEAN }, { text: QUOTED_CLEAN }]);
  await cc.api({ cmd: 'startHandoffReview', sessionId: original.id, reviewLoop: { maxRounds: 5 } });
  const end = await until(async () => {
    const l = await loopOf(cc, original.id);
    return l?.ended ? l : null;
  }, 'the loop to stop');
  assert.equal(chats(from).length, 4, 'handoff, review, feedback, the quoting review');
  assert.notEqual(end.stop.reason, 'clean', JSON.stringify(end.stop));
  assert.equal(end.round, 2);
  const findings = await cc.api({ cmd: 'listFindings', sessionId: original.id });
  const f1 = findings.findings.find((f) => f.id === 'F1');
  assert.notEqual(f1.status, 'fixed', JSON.stringify(f1.history));
  assert.ok(!f1.history.some((h) => h.side === 'reviewer' && h.status === 'fixed'), JSON.stringify(f1.history));
  // The implementer's bare FIXED is a claim until the reviewer confirms it, and the list says so.
  assert.equal(f1.status, 'claimedFixed', JSON.stringify(f1.history));
  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
  await page.locator(sel.item(end.reviewSessionId)).click({ timeout: WAIT });
  const list = page.locator(`${sel.chat(end.reviewSessionId)} [data-testid="findings-list"]`).first();
  const row = list.locator('[data-testid="finding-row"][data-finding-id="F1"]');
  await row.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal((await row.locator('[data-testid="finding-status"]').innerText()).trim(), 'Claimed fixed');
  assert.match(await list.locator('[data-testid="findings-open-count"]').textContent(), /2 open of 2/);
});
