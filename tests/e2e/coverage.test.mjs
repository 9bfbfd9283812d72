// Coverage, disputes and the report of the review loop, against the real `opencode serve` with
// the scripted model, in a git repository with two changed files: a CLEAN that names no file it
// reviewed does not end the loop (the loop asks once, hidden) and stops as `uncovered` naming
// the files; a CLEAN whose REVIEWED lines cover every changed file ends it; a dispute with
// evidence reaches the reviewer, which withdraws the finding; and the report of that loop, from
// the review tab's "Copy report" request and from `crosscheck review report`.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { until as untilCondition } from '../support/page.mjs';
import { screenshot } from '../support/browser.mjs';
import { crosscheckBin } from '../support/crosscheck.mjs';
import { startStack } from '../support/stack.mjs';

const PASSWORD = 'e2e-secret';
const WAIT = 60_000;

const HANDOFF = 'HANDOFF: greet() now takes a name; a helper in src/new.rs.';
const CLEAN_NOTHING = 'Looks right to me.\n\nFINDINGS\nVERDICT: CLEAN';
const CLEAN_ALL = 'FINDINGS\nREVIEWED src/lib.rs\nREVIEWED src/new.rs:1-3\nVERDICT: CLEAN';
const ROUND_1 = 'One thing.\n\nFINDINGS\n- [F1] major src/lib.rs:2 — greet() panics on an empty name\nREVIEWED src/lib.rs\nREVIEWED src/new.rs\nVERDICT: FLAGS (1)';
const EVIDENCE = 'if name.is_empty() { return String::new(); }';
const DISPUTE = `The guard is there already.\n\n- [F1] DISPUTED — src/lib.rs:2 reads \`${EVIDENCE}\``;
const WITHDRAWN = 'FINDINGS\n- [F1] WITHDRAWN — right, line 2 returns early on an empty name\nREVIEWED src/lib.rs\nREVIEWED src/new.rs\nVERDICT: CLEAN';

let stack;
let ms;
let oc;
let cc;
let browser;
let page;
let repo;

const git = (...args) => execFileSync('git', args, { cwd: repo, stdio: 'pipe' }).toString();

before(async () => {
  repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'crosscheck-coverage-')));
  git('init', '-q');
  git('config', 'user.email', 'test@example.com');
  git('config', 'user.name', 'Test');
  fs.mkdirSync(path.join(repo, 'src'));
  fs.writeFileSync(path.join(repo, 'src', 'lib.rs'), 'pub fn greet() -> String {\n    "hi".into()\n}\n');
  git('add', '.');
  git('commit', '-q', '-m', 'first');
  // The work under review: one file changed, one new.
  fs.writeFileSync(path.join(repo, 'src', 'lib.rs'), `pub fn greet(name: &str) -> String {\n    ${EVIDENCE}\n    format!("hi {name}")\n}\n`);
  fs.writeFileSync(path.join(repo, 'src', 'new.rs'), 'pub fn helper() {}\n');
  stack = await startStack({ password: PASSWORD, opencode: { projectDir: repo } });
  ({ ms, oc, cc, browser, page } = stack);
});

after(async () => {
  await stack?.stop();
  if (repo) fs.rmSync(repo, { recursive: true, force: true });
});

const until = (probe, what, timeoutMs = WAIT) => untilCondition(probe, what, timeoutMs);
const chats = (from = 0) => ms.requests.slice(from).filter((r) => r.kind === 'chat');

async function loopOf(originalId) {
  const loops = await cc.api({ cmd: 'listLoops' });
  return loops.find((l) => l.originalSessionId === originalId);
}

/** Starts a looped handoff of a new session with the model's replies scripted; answers the
 * loop once it ended and the model requests it caused. */
async function runLoop(title, replies) {
  const original = await oc.json('/session', { method: 'POST', body: { title } });
  const from = ms.requests.length;
  ms.script(replies);
  await cc.api({ cmd: 'startHandoffReview', sessionId: original.id, reviewLoop: { maxRounds: 5 } });
  const end = await until(async () => {
    const l = await loopOf(original.id);
    return l?.ended ? l : null;
  }, `the loop of "${title}" to end`);
  return { original, end, requests: chats(from) };
}

test('a CLEAN that names no file it reviewed is asked once, then stops the loop as uncovered', async () => {
  const { original, end, requests } = await runLoop('Greet uncovered', [
    { text: HANDOFF },
    { text: CLEAN_NOTHING },
    { text: CLEAN_NOTHING },
  ]);
  assert.equal(end.stop.reason, 'uncovered', JSON.stringify(end.stop));
  assert.match(end.stop.detail, /named no file it reviewed/);
  assert.match(end.stop.detail, /src\/lib\.rs, src\/new\.rs/, 'the stop names the files');
  assert.equal(requests.length, 3, 'handoff, review, one ask: nothing to the implementer, no second ask');
  const ask = requests[2];
  assert.ok(ask.lastUserText.includes('does not say you reviewed these changed files: src/lib.rs, src/new.rs'), ask.lastUserText);
  assert.ok(ask.lastUserText.includes('REVIEWED'), 'the ask repeats the format');
  // The ask is all hidden: the review session shows no visible text for it.
  const messages = await oc.json(`/session/${end.reviewSessionId}/message`);
  const asked = messages.filter((m) => m.info.role === 'user').at(-1);
  assert.ok(asked.parts.filter((p) => p.type === 'text').every((p) => p.synthetic), JSON.stringify(asked.parts));

  const view = await cc.api({ cmd: 'listFindings', sessionId: original.id });
  assert.equal(view.rounds.length, 2);
  for (const r of view.rounds) {
    assert.deepEqual(r.coverage.reviewed, []);
    assert.deepEqual(r.coverage.changed, ['src/lib.rs', 'src/new.rs']);
    assert.deepEqual(r.coverage.uncovered, ['src/lib.rs', 'src/new.rs']);
  }
});

test('a CLEAN whose REVIEWED lines cover every changed file ends the loop clean', async () => {
  const { original, end, requests } = await runLoop('Greet covered', [{ text: HANDOFF }, { text: CLEAN_ALL }]);
  assert.equal(end.stop.reason, 'clean', JSON.stringify(end.stop));
  assert.equal(requests.length, 2, 'handoff and one review');
  assert.ok(requests[1].lastUserText.includes('REVIEWED'), 'the reviewer is asked for REVIEWED lines');
  const view = await cc.api({ cmd: 'listFindings', sessionId: original.id });
  assert.deepEqual(view.rounds[0].coverage.uncovered, []);
  assert.deepEqual(view.rounds[0].coverage.reviewed.map((r) => [r.path, r.lines ?? null]), [['src/lib.rs', null], ['src/new.rs', '1-3']]);
});

test('a dispute with evidence reaches the reviewer, ends withdrawn, and the report tells the loop', async () => {
  const { original, end, requests } = await runLoop('Greet disputed', [
    { text: HANDOFF },
    { text: ROUND_1 },
    { text: DISPUTE },
    { text: WITHDRAWN },
  ]);
  assert.equal(end.stop.reason, 'clean', JSON.stringify(end.stop));
  assert.equal(requests.length, 4, 'handoff, review, feedback, response');
  assert.ok(requests[3].lastUserText.includes(EVIDENCE), 'the implementer\'s evidence reaches the reviewer');
  const view = await cc.api({ cmd: 'listFindings', sessionId: original.id });
  const f1 = view.findings.find((f) => f.id === 'F1');
  assert.equal(f1.status, 'withdrawn');
  const said = f1.history.map((h) => [h.round, h.side, h.status]);
  assert.deepEqual(said, [[1, 'reviewer', 'open'], [1, 'implementer', 'disputed'], [2, 'reviewer', 'withdrawn']]);
  assert.ok(f1.history[1].note.includes(EVIDENCE), JSON.stringify(f1.history[1]));

  // The review tab: each round with its coverage, and Copy report.
  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
  await page.locator(`[data-testid="session-item"][data-session-id="${end.reviewSessionId}"]`).click({ timeout: WAIT });
  const list = page.locator(`[data-testid="chat"][data-session-id="${end.reviewSessionId}"] [data-testid="findings-list"]`).first();
  const round2 = list.locator('[data-testid="review-round"][data-round="2"]');
  await round2.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal((await round2.locator('[data-testid="round-coverage"]').innerText()).trim(), 'covered 2 of 2 changed files');
  await list.locator('[data-testid="finding-row"][data-finding-id="F1"] [data-testid="finding-expand"]').click();
  await list.locator('[data-testid="finding-history"]').waitFor({ state: 'visible', timeout: WAIT });
  await screenshot(page, 'review-coverage');

  const report = await cc.api({ cmd: 'reviewReport', sessionId: original.id });
  assert.match(report, /stopped as `clean`/);
  assert.match(report, /\*\*Final verdict:\*\* CLEAN \(covered 2 of 2 changed files\)/);
  assert.match(report, /- Round 1: FLAGS \\\(1\\\); covered 2 of 2 changed files/);
  assert.match(report, /round 1, implementer: disputed: .*is\\_empty\\\(\\\)/);
  assert.match(report, /round 2, reviewer: withdrawn: right, line 2 returns early/);
  assert.match(report, new RegExp(`commit ${git('rev-parse', 'HEAD').trim()}`));
  assert.ok(!report.includes('<') && report.split('```').length % 2 === 1, report);

  // The same text from the command line, for the folder's newest review.
  const printed = execFileSync(crosscheckBin(), ['review', 'report', '--cwd', repo], {
    env: { ...process.env, CROSSCHECK_DATA_DIR: cc.dataDir },
  }).toString();
  assert.equal(printed, report);
  console.log(report);
});
