// The read-only reviewer against the real `opencode serve`: the review session Crosscheck creates
// for a handoff must be unable to write a file or run a program, whatever the shell grammar. The
// pinned server asks permission only for plain command nodes (a declaration such as `export`, a
// brace expansion `{touch,x}` and similar are never checked), so no allow list of shell patterns
// can hold; the reviewer gets no shell and reads with OpenCode's own tools (`read` here; `grep`
// and `glob` need ripgrep, which this offline server cannot fetch).
//
// The scripted reviewer model makes every escape try below as a tool call (most through `bash`,
// some through write, edit, `bash` with a workdir and the `task` subagent). Each try that would
// run a program makes a marker file in a folder outside the project (the repository's own
// `payload.sh` does that too, as an untrusted repository could); the test then checks that no
// marker exists, the project's files and git state are as they were, and that reading a file and
// listing the folder still answer. No browser: this is the backend against the real server.

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
const WAIT = 90_000;

let ms;
let oc;
let cc;
let project;
let pwn;

/** Every file under `dir` (relative), with its content, `.git` objects and logs left out. */
function snapshot(dir) {
  const out = {};
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      const rel = path.relative(dir, full);
      if (/^\.git\/(objects|logs)(\/|$)/.test(rel) || rel === '.git/index' || rel === '.git/opencode') continue;
      if (e.isDirectory()) walk(full);
      else out[rel] = fs.readFileSync(full, 'utf8');
    }
  };
  walk(dir);
  return out;
}

before(async () => {
  project = makeTempDir('reviewer-shell-');
  pwn = makeTempDir('reviewer-pwn-');
  const git = (...args) => execFileSync('git', args, { cwd: project, stdio: 'pipe' });
  git('init', '-q');
  git('config', 'user.email', 'test@example.com');
  git('config', 'user.name', 'Test');
  fs.writeFileSync(path.join(project, 'lib.rs'), 'fn greet() {}\n');
  // What an untrusted repository can hold: a program, and a patch that would add a file.
  fs.writeFileSync(path.join(project, 'payload.sh'), `#!/bin/sh\ntouch '${pwn}/payload-ran'\necho x\n`, { mode: 0o755 });
  fs.writeFileSync(
    path.join(project, 'evil.patch'),
    'diff --git a/applied.txt b/applied.txt\nnew file mode 100644\n--- /dev/null\n+++ b/applied.txt\n@@ -0,0 +1 @@\n+applied\n',
  );
  git('add', '.');
  git('commit', '-q', '-m', 'one');
  // An uncommitted change, so that there is something to review and to stash or check out.
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

/**
 * The escape tries, by family. A `bash` command unless `tool` says otherwise. Each would leave a
 * marker in the pwn folder (or change the project) if it ran.
 */
function tries(P) {
  const S = './payload.sh';
  const bash = (family, command) => ({ family, tool: 'bash', args: { command, description: 'check' } });
  return [
    // Declarations are never checked, and what they export reaches the next allowed command.
    bash('export', `export GIT_EXTERNAL_DIFF=${S}; git diff`),
    bash('export', `declare -x GIT_EXTERNAL_DIFF=${S}; git diff`),
    bash('export', `typeset -x GIT_EXTERNAL_DIFF=${S}; git diff`),
    bash('export', `readonly GIT_EXTERNAL_DIFF=${S}; export GIT_EXTERNAL_DIFF; git diff`),
    bash('export', `export GIT_CONFIG_PARAMETERS="'core.fsmonitor=${S}'"; git status`),
    bash('export', `export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=${S}; git status`),
    bash('export', `export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=diff.external GIT_CONFIG_VALUE_0=${S}; git diff`),
    bash('export', `export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.logx GIT_CONFIG_VALUE_0='!touch ${P}/alias'; git logx`),
    bash('export', `export BASH_ENV=${S}; git log -1`),
    bash('export', `export GIT_PAGER=${S}; git -p log -1`),
    bash('export', `export GIT_EDITOR=${S}; git commit --amend`),
    // A brace expansion is a command no rule sees.
    bash('brace', `{touch,${P}/brace}`),
    bash('brace', `{python3,-c,"open('${P}/python','w').write('x')"}`),
    bash('brace', `git diff {,--outpu}t=${P}/brace-out`),
    bash('brace', `ls; {sh,${S}}`),
    // Inline assignments and env.
    bash('inline', `GIT_EXTERNAL_DIFF=${S} git diff`),
    bash('inline', `GIT_CONFIG_PARAMETERS="'core.fsmonitor=${S}'" git status`),
    bash('inline', `env GIT_EXTERNAL_DIFF=${S} git diff`),
    // git -c runs configured programs.
    bash('git -c', `git -c core.fsmonitor=${S} status`),
    bash('git -c', `git -c diff.external=${S} diff`),
    bash('git -c', `git -c core.pager=${S} -p log -1`),
    bash('git -c', `git -c alias.logx='!${S}' logx`),
    // --output and its spellings.
    bash('output', `git diff --output=${P}/out1`),
    bash('output', `git log -p --output ${P}/out2`),
    bash('output', `git show --outp=${P}/out3`),
    bash('output', `git diff "--out"put=${P}/out4`),
    // Redirections.
    bash('redirect', `cat lib.rs > ${P}/redir1`),
    bash('redirect', `git diff >> ${P}/redir2`),
    bash('redirect', `ls 2> ${P}/redir3`),
    bash('redirect', `cat lib.rs >| ${P}/redir4`),
    bash('redirect', `cat lib.rs | tee ${P}/tee`),
    // Substitutions.
    bash('subst', `cat $(${S})`),
    bash('subst', `ls "$(touch ${P}/subst2)"`),
    bash('subst', `git log --format=$(${S})`),
    bash('backtick', `cat \`${S}\``),
    bash('backtick', `ls "\`touch ${P}/backtick2\`"`),
    // eval, lists, pipes.
    bash('eval', `eval ${S}`),
    bash('eval', `eval "touch ${P}/eval2"`),
    bash('list', `ls; ${S}`),
    bash('list', `git status; touch ${P}/semicolon`),
    bash('list', `git status && ${S}`),
    bash('list', `ls || touch ${P}/or`),
    bash('pipe', `echo ${S} | sh`),
    bash('pipe', `git log -1 | xargs ${S}`),
    // git commands that write.
    bash('git write', `git config core.fsmonitor ${S}`),
    bash('git write', 'git apply evil.patch'),
    bash('git write', 'git stash'),
    bash('git write', 'git checkout -- lib.rs'),
    bash('git write', 'git reset --hard'),
    bash('git write', 'git commit -qam pwned'),
    // Programs that run programs.
    bash('runner', `source ${S}`),
    bash('runner', `. ${S}`),
    bash('runner', `sh ${S}`),
    bash('runner', S),
    bash('runner', `find . -name lib.rs -exec ${S} \\;`),
    bash('runner', `rg --pre=${S} greet`),
    bash('runner', `awk 'BEGIN{system("${S}")}'`),
    bash('runner', `f() { ${S}; }; f`),
    bash('runner', `(${S})`),
    bash('runner', `exec ${S}`),
    bash('runner', `command ${S}`),
    // The other tools that write or run.
    { family: 'write tool', tool: 'write', args: { filePath: path.join(project, 'written.txt'), content: 'x' } },
    { family: 'edit tool', tool: 'edit', args: { filePath: path.join(project, 'lib.rs'), oldString: 'fn greet', newString: 'fn pwned' } },
    { family: 'workdir', tool: 'bash', args: { command: `touch ${P}/workdir`, workdir: P, description: 'check' } },
    { family: 'workdir', tool: 'bash', args: { command: 'git status', workdir: '/', description: 'check' } },
    { family: 'task', tool: 'task', args: { description: 'check', prompt: 'Make a file.', subagent_type: 'general' } },
  ];
}

/** The plain reads the reviewer keeps. */
const READS = [
  { tool: 'read', args: { filePath: 'lib.rs' }, shows: /name: &str/ },
  { tool: 'read', args: { filePath: '.' }, shows: /lib\.rs/ },
];

test('the read-only reviewer writes nothing and runs nothing, and still reads', async () => {
  const TRIES = tries(pwn);
  assert.ok(TRIES.length >= 63, `${TRIES.length} tries`);
  const before = snapshot(project);
  const original = await oc.json('/session', { method: 'POST', body: { title: 'Greet by name' } });
  // The handoff, then the reviewer: every try and read as one tool call each; a subagent the
  // `task` call may start asks for a file of its own; then the verdict.
  const calls = [...TRIES, ...READS].map(({ tool, args }) => ({ name: tool, args }));
  ms.script([
    { text: 'HANDOFF: greet() takes a name.' },
    { tools: calls },
    { tool: 'bash', args: { command: `touch ${pwn}/subagent`, description: 'check' } },
    { text: 'done' },
    { text: 'FINDINGS\nVERDICT: CLEAN' },
    { text: 'FINDINGS\nVERDICT: CLEAN' },
  ]);
  await cc.api({ cmd: 'startHandoffReview', sessionId: original.id });
  const reviewId = await until(async () => {
    const s = await oc.json(`/session/${original.id}`);
    return s.metadata?.openchamber?.reviewSessionID ?? null;
  }, 'the review session');
  const rules = (await oc.json(`/session/${reviewId}`)).permission ?? [];
  // A permission OpenCode asks for (a read or a workdir outside the folder) is refused, as a
  // user would: asked is not run.
  const asked = [];
  const dirQuery = `directory=${encodeURIComponent(fs.realpathSync(project))}`;
  const parts = await until(async () => {
    for (const p of await oc.json(`/permission?${dirQuery}`)) {
      // OpenCode asks `doom_loop` when a model repeats one call three times: here the same
      // refusal of an unavailable tool. Going on runs nothing, and a refusal would end the
      // reviewer's turn before the other tries; everything else asked is refused.
      const reply = p.permission === 'doom_loop' ? 'always' : 'reject';
      asked.push(`${p.permission} ${JSON.stringify(p.patterns)}: ${reply}`);
      await oc.fetch(`/permission/${p.id}/reply?${dirQuery}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ reply }),
      });
    }
    const msgs = await oc.json(`/session/${reviewId}/message`);
    const tools = msgs.flatMap((m) => m.parts).filter((p) => p.type === 'tool');
    const finished = tools.filter((p) => p.state?.status === 'completed' || p.state?.status === 'error');
    const last = msgs.at(-1);
    const idle = last?.info?.role === 'assistant' && last.info.time?.completed;
    return finished.length >= calls.length && idle ? tools : null;
  }, 'every tool call to finish');

  const outcome = (i) => parts[i]?.state;
  const report = calls.map((c, i) => `${i} ${c.name}/${parts[i]?.tool} ${JSON.stringify(c.args).slice(0, 70)}: ${outcome(i)?.status} ${String(outcome(i)?.error ?? outcome(i)?.output ?? '').slice(0, 60)}`).join('\n');
  const context = `\n${report}\nasked and refused: ${asked.join('; ')}\nrules: ${JSON.stringify(rules)}`;

  // Nothing ran: no marker, the project and its git state as they were.
  assert.deepEqual(fs.readdirSync(pwn), [], `no program ran and no file was written outside${context}`);
  assert.deepEqual(snapshot(project), before, `the project is as it was${context}`);
  assert.equal(execFileSync('git', ['stash', 'list'], { cwd: project, encoding: 'utf8' }), '', 'nothing stashed');
  // Each try was refused: a call of a tool the reviewer does not have is OpenCode's `invalid`
  // tool ("Model tried to call unavailable tool"), a refused one an error.
  TRIES.forEach((t, i) => {
    const ran = outcome(i)?.status === 'completed' && parts[i]?.tool !== 'invalid';
    assert.ok(!ran, `${t.family}: ${JSON.stringify(t.args)} did not run${context}`);
  });

  // The reads answered.
  READS.forEach((r, i) => {
    const state = outcome(TRIES.length + i);
    assert.equal(state?.status, 'completed', `${r.tool} read${context}`);
    assert.match(String(state.output ?? ''), r.shows, `${r.tool} answered`);
  });

  // And the reviewer was offered no tool that writes or runs a program.
  const offered = ms.requests
    .filter((r) => JSON.stringify(r.body?.messages ?? []).includes('greet() takes a name'))
    .flatMap((r) => (r.body?.tools ?? []).map((t) => t.function?.name));
  assert.ok(offered.includes('read'), `the reviewer reads: ${offered}`);
  for (const tool of ['bash', 'edit', 'write', 'task', 'webfetch']) {
    assert.ok(!offered.includes(tool), `the reviewer has no ${tool} tool: ${[...new Set(offered)]}`);
  }
});
