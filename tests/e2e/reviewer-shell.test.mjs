// The read-only reviewer's shell rules against the real `opencode serve`: the review session
// Crosscheck creates gets `bash` denied but for the read-only commands, and the deny rules after
// those allows stop what would write through them (`git diff --output=FILE`, `git log --output`,
// `git show --output`, a redirection, ripgrep's `--pre` program) while `git diff` and
// `cat FILE` still run. The scripted reviewer model calls the `bash` tool; OpenCode decides.
// No browser: this is the backend against the real server.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { makeTempDir } from '../support/cleanup.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';

const PASSWORD = 'e2e-secret';
const WAIT = 60_000;

let ms;
let oc;
let cc;
let project;

before(async () => {
  project = makeTempDir('reviewer-shell-');
  const git = (...args) => execFileSync('git', args, { cwd: project, stdio: 'pipe' });
  git('init', '-q');
  git('config', 'user.email', 'test@example.com');
  git('config', 'user.name', 'Test');
  fs.writeFileSync(path.join(project, 'lib.rs'), 'fn greet() {}\n');
  git('add', '.');
  git('commit', '-q', '-m', 'one');
  // An uncommitted change, so that `git diff` has something to print.
  fs.writeFileSync(path.join(project, 'lib.rs'), 'fn greet(name: &str) {}\n');
  ms = await startModelServer();
  oc = await startOpencode({ modelUrl: ms.baseURL, password: PASSWORD, projectDir: project });
  cc = await startCrosscheck({ opencodeUrl: oc.url, password: PASSWORD });
});

after(async () => {
  await cc?.stop();
  await oc?.dispose();
  await ms?.close();
});

async function until(probe, what, timeoutMs = WAIT) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Each command the reviewer's model asks to run, and whether OpenCode must refuse it. */
const COMMANDS = [
  { command: 'git diff', runs: true },
  { command: 'cat lib.rs', runs: true },
  { command: 'ls -a', runs: true },
  // A program whose name only starts with "ls" is not the listing the allow list means.
  { command: 'lsblk' },
  { command: 'git diff --output=diff-out.txt', writes: 'diff-out.txt' },
  { command: 'git diff --output diff-out2.txt', writes: 'diff-out2.txt' },
  { command: 'git log -p --output=log-out.txt', writes: 'log-out.txt' },
  { command: 'git show --output=show-out.txt', writes: 'show-out.txt' },
  { command: 'cat lib.rs > cat-out.txt', writes: 'cat-out.txt' },
  { command: 'git diff >> append-out.txt', writes: 'append-out.txt' },
  { command: 'ls 2> err-out.txt', writes: 'err-out.txt' },
  { command: 'rg --pre=rm greet', writes: 'lib.rs', pre: true },
  { command: 'git status && touch and-out.txt', writes: 'and-out.txt' },
];

test('the reviewer runs read-only commands; what would write through an allowed one is denied', async () => {
  const original = await oc.json('/session', { method: 'POST', body: { title: 'Greet by name' } });
  const reviewerCalls = COMMANDS.map(({ command }) => ({ name: 'bash', args: { command, description: 'check' } }));
  // The handoff, then the reviewer: every command as one tool call each, then its verdict.
  ms.script([
    { text: 'HANDOFF: greet() takes a name.' },
    { tools: reviewerCalls },
    { text: 'FINDINGS\nVERDICT: CLEAN' },
  ]);
  await cc.api({ cmd: 'startHandoffReview', sessionId: original.id });
  const reviewId = await until(async () => {
    const s = await oc.json(`/session/${original.id}`);
    return s.metadata?.openchamber?.reviewSessionID ?? null;
  }, 'the review session');
  const rules = (await oc.json(`/session/${reviewId}`)).permission ?? [];
  const done = await until(async () => {
    const msgs = await oc.json(`/session/${reviewId}/message`);
    const tools = msgs.flatMap((m) => m.parts).filter((p) => p.type === 'tool' && p.tool === 'bash');
    const finished = tools.filter((p) => p.state?.status === 'completed' || p.state?.status === 'error');
    return finished.length === COMMANDS.length ? tools : null;
  }, 'every bash call to finish');

  const outcome = (command) => done.find((p) => p.state?.input?.command === command)?.state;
  const report = COMMANDS.map(({ command }) => `${command}: ${outcome(command)?.status} ${String(outcome(command)?.error ?? '').slice(0, 80)}`);
  for (const c of COMMANDS) {
    const state = outcome(c.command);
    assert.ok(state, `the call ${c.command} was made`);
    if (c.runs) {
      assert.equal(state.status, 'completed', `${c.command} runs\n${report.join('\n')}\nrules: ${JSON.stringify(rules)}`);
    } else {
      assert.equal(state.status, 'error', `${c.command} is refused\n${report.join('\n')}\nrules: ${JSON.stringify(rules)}`);
      assert.match(String(state.error), /restricted|denied|not allowed|rule/i, `${c.command}: refused by a rule, not failed: ${state.error}`);
    }
  }
  assert.match(outcome('git diff').output ?? outcome('git diff').metadata?.output ?? '', /name: &str/, 'git diff printed the change');
  for (const c of COMMANDS.filter((c) => c.writes && !c.pre)) {
    assert.ok(!fs.existsSync(path.join(project, c.writes)), `${c.command} wrote nothing`);
  }
  assert.equal(fs.readFileSync(path.join(project, 'lib.rs'), 'utf8'), 'fn greet(name: &str) {}\n', 'the code is as it was');
});
