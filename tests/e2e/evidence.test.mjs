// Evidence per finding, against the real `opencode serve` with the scripted model: the
// implementer edits another part of the finding's file (far from its lines) and claims FIXED;
// the reviewer's next prompt, read back through OpenCode's API, says the finding's lines are
// unchanged, and the Findings list shows it on the finding.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { newRecordedPage, until as untilCondition } from '../support/page.mjs';
import { launchBrowser, screenshot } from '../support/browser.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';

const PASSWORD = 'e2e-secret';
const WAIT = 60_000;

/** src/greet.rs: 40 lines; greet() sits at line 11, another function at line 35. */
const line = (i) => {
  if (i === 11) return '    name.chars().next().unwrap().to_string()';
  if (i === 35) return 'pub fn shout() -> String { "HI".into() }';
  return `// line ${i}`;
};
const SOURCE = Array.from({ length: 40 }, (_, i) => `${line(i + 1)}\n`).join('');
/** The implementer's edit: line 35 only, far from line 11. */
const EDITED = SOURCE.replace('pub fn shout() -> String { "HI".into() }', 'pub fn shout(name: &str) -> String { name.to_uppercase() }');

const HANDOFF = 'HANDOFF: greet() returns the first letter of a name.';
const ROUND_1 = 'One thing.\n\nFINDINGS\n- [F1] major src/greet.rs:11 — greet() panics on an empty name\nREVIEWED src/greet.rs\nVERDICT: FLAGS (1)';
const CLAIM = 'Guarded the empty name.\n\n- [F1] FIXED';
const ROUND_2 = 'FINDINGS\n- [F1] OPEN — line 11 still unwraps\nREVIEWED src/greet.rs\nVERDICT: FLAGS (1)';
const NOTE = 'F1: claimed fixed, but lines 8-14 of src/greet.rs are unchanged';

let ms;
let oc;
let cc;
let browser;
let page;
let repo;

const git = (...args) => execFileSync('git', args, { cwd: repo, stdio: 'pipe' }).toString();

before(async () => {
  repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'crosscheck-evidence-')));
  git('init', '-q');
  git('config', 'user.email', 'test@example.com');
  git('config', 'user.name', 'Test');
  fs.mkdirSync(path.join(repo, 'src'));
  fs.writeFileSync(path.join(repo, 'src', 'greet.rs'), SOURCE);
  git('add', '.');
  git('commit', '-q', '-m', 'first');
  ms = await startModelServer();
  oc = await startOpencode({ modelUrl: ms.baseURL, password: PASSWORD, projectDir: repo });
  cc = await startCrosscheck({ opencodeUrl: oc.url, password: PASSWORD });
  browser = await launchBrowser();
  ({ page } = await newRecordedPage(browser));
});

after(async () => {
  await browser?.close();
  await cc?.stop();
  await oc?.dispose();
  await ms?.close();
  if (repo) fs.rmSync(repo, { recursive: true, force: true });
});

const until = (probe, what, timeoutMs = WAIT) => untilCondition(probe, what, timeoutMs);

test('an edit elsewhere in the finding\'s file leaves its lines unchanged: the reviewer is told per finding', async () => {
  const original = await oc.json('/session', { method: 'POST', body: { title: 'Greet evidence' } });
  ms.script([
    { text: HANDOFF },
    { text: ROUND_1 },
    { tool: 'write', args: { filePath: path.join(repo, 'src', 'greet.rs'), content: EDITED } },
    { text: CLAIM },
    { text: ROUND_2 },
  ]);
  // One round of feedback: the loop stops at the cap after the second review.
  await cc.api({ cmd: 'startHandoffReview', sessionId: original.id, reviewLoop: { maxRounds: 2 } });
  const end = await until(async () => {
    const loops = await cc.api({ cmd: 'listLoops' });
    const l = loops.find((x) => x.originalSessionId === original.id);
    return l?.ended ? l : null;
  }, 'the loop to end');
  assert.equal(fs.readFileSync(path.join(repo, 'src', 'greet.rs'), 'utf8'), EDITED, 'the implementer edited line 35');

  // The reviewer's second prompt, as OpenCode has it: its hidden part names the lines.
  const messages = await oc.json(`/session/${end.reviewSessionId}/message`);
  const prompts = messages.filter((m) => m.info.role === 'user');
  assert.equal(prompts.length, 2, JSON.stringify(end.stop));
  const hidden = prompts[1].parts.filter((p) => p.type === 'text' && p.synthetic).map((p) => p.text).join('\n');
  assert.ok(hidden.includes(NOTE), hidden);
  assert.ok(!prompts[0].parts.some((p) => p.type === 'text' && p.text.includes('claimed fixed')), 'the first review has no note');

  // The finding's history says the same.
  const view = await cc.api({ cmd: 'listFindings', sessionId: original.id });
  const f1 = view.findings.find((f) => f.id === 'F1');
  const claim = f1.history.find((h) => h.side === 'implementer');
  assert.equal(claim.status, 'claimedFixed');
  assert.equal(claim.claimedUnchanged, true);
  assert.deepEqual(claim.unchangedLines, { path: 'src/greet.rs', firstLine: 8, lastLine: 14 });

  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
  await page.locator(`[data-testid="session-item"][data-session-id="${end.reviewSessionId}"]`).click({ timeout: WAIT });
  const list = page.locator(`[data-testid="chat"][data-session-id="${end.reviewSessionId}"] [data-testid="findings-list"]`).first();
  const row = list.locator('[data-testid="finding-row"][data-finding-id="F1"]');
  await row.waitFor({ state: 'visible', timeout: WAIT });
  await row.locator('[data-testid="finding-expand"]').click();
  const said = row.locator('[data-testid="finding-round-unchanged"]');
  await said.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal((await said.innerText()).trim(), 'Claimed fixed, but lines 8-14 of src/greet.rs are unchanged');
  await row.scrollIntoViewIfNeeded();
  await screenshot(page, 'finding-lines-unchanged');
});
