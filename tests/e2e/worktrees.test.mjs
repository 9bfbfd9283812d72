// Worktrees end to end (issue 24), in headless Chromium against the real `opencode serve` and the
// scripted model: two sessions made in two new worktrees of one repository through the New
// session dialog, each writing the same file differently; each reviewed by a handoff whose review
// session lives in the same worktree (checked through OpenCode's API: its `directory`), the
// review's pin fingerprinting that folder; the sidebar grouping them under their repository;
// the Changes tab of each against its base branch; the first merged back (the base branch has the
// commit), the second reporting the conflict in words and leaving the base clean; a worktree
// removed with its branch, its sessions then saying the folder is gone.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launchBrowser, screenshot } from '../support/browser.mjs';
import { makeTempDir } from '../support/cleanup.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { subscribeEvents } from '../support/events.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';
import { newRecordedPage, until as untilCondition } from '../support/page.mjs';

const PASSWORD = 'e2e-secret';
const WAIT = 60_000;

let ms;
let oc;
let cc;
let events;
let browser;
let page;
let pageErrors = [];
let repo;

const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };

function git(dir, ...args) {
  return execFileSync('git', args, { cwd: dir, env: GIT_ENV, encoding: 'utf8' });
}

before(async () => {
  ms = await startModelServer();
  repo = makeTempDir('crosscheck-worktrees-');
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'config', 'user.name', 't');
  git(repo, 'config', 'user.email', 't@example.com');
  fs.writeFileSync(path.join(repo, 'greeting.txt'), 'base\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'init');
  oc = await startOpencode({ modelUrl: ms.url, password: PASSWORD, projectDir: repo });
  events = await subscribeEvents(oc.url, { headers: oc.authHeaders });
  cc = await startCrosscheck({ opencodeUrl: oc.url, password: PASSWORD });
  browser = await launchBrowser();
  ({ page, pageErrors } = await newRecordedPage(browser));
});

after(async () => {
  events?.close();
  await browser?.close();
  await cc?.stop();
  await oc?.dispose();
  await ms?.close();
});

const until = (probe, what, timeoutMs = WAIT) => untilCondition(probe, what, timeoutMs);
const chat = (id) => `[data-testid="chat"][data-session-id="${id}"]`;
const item = (id) => `[data-testid="session-item"][data-session-id="${id}"]`;
const panel = '[data-testid="changes-panel"]';

/** Makes a session in a new worktree through the New session dialog; answers its id. */
async function newSessionInWorktree(title) {
  await page.locator('[data-testid="new-session"]').click({ timeout: WAIT });
  const dialog = page.locator('[data-testid="new-session-dialog"]');
  await dialog.waitFor({ state: 'visible', timeout: WAIT });
  await dialog.locator('[data-testid="new-session-directory"]').fill(repo);
  await dialog.locator('[data-testid="new-session-title"]').fill(title);
  await dialog.locator('[data-testid="new-session-worktree"]').check();
  const name = await dialog.locator('[data-testid="new-session-worktree-name"]').inputValue();
  await dialog.locator('[data-testid="new-session-create"]').click();
  await dialog.waitFor({ state: 'detached', timeout: WAIT });
  const view = page.locator('[data-testid="chat"]').first();
  const id = await until(async () => {
    const found = await view.getAttribute('data-session-id').catch(() => null);
    return found && found !== previous ? found : null;
  }, `the new session "${title}"`);
  previous = id;
  return { id, name };
}
let previous = null;
/** What the first test leaves for the faults test. */
const state = {};

/** An Api request that must fail: answers its `{code, message}`. */
async function refused(request) {
  let answer;
  try {
    answer = await cc.api(request);
  } catch (err) {
    return JSON.parse(err.message.slice(err.message.indexOf('{')));
  }
  return assert.fail(`${request.cmd} was not refused: ${JSON.stringify(answer)}`);
}

/** Types a prompt into the open session's composer and waits for OpenCode to finish the turn. */
async function prompt(sessionId, text) {
  const from = events.events.length;
  const input = page.locator(`${chat(sessionId)} [data-testid="composer-input"]`);
  await input.fill(text);
  await input.press('Enter');
  await events.waitFor((e) => e.type === 'session.idle' && e.properties.sessionID === sessionId, {
    from,
    timeoutMs: WAIT,
    what: `the turn of "${text}"`,
  });
}

async function select(id) {
  await page.locator(`${item(id)} .main`).click({ timeout: WAIT });
  await page.locator(`${chat(id)} [data-testid="composer-input"]`).waitFor({ state: 'visible', timeout: WAIT });
}

/** Runs a handoff through the Api and answers the review session's id once the flow is done. */
async function handoff(sessionId, handoffText, reviewText) {
  ms.script([{ text: handoffText }, { text: reviewText }]);
  const flow = await cc.api({ cmd: 'startHandoffReview', sessionId });
  const done = await until(async () => {
    const f = (await cc.api({ cmd: 'snapshot' })).flows.find((x) => x.id === flow.id);
    return f && ['done', 'failed', 'cancelled'].includes(f.step) ? f : null;
  }, `the handoff of ${sessionId}`);
  assert.equal(done.step, 'done', JSON.stringify(done.error));
  const reviewId = (await oc.json(`/session/${sessionId}`)).metadata?.openchamber?.reviewSessionID;
  assert.ok(reviewId, 'the review session is linked');
  // The reviewer's turn ends (its reply is what the pin records).
  await until(async () => {
    const list = await oc.json(`/session/${reviewId}/message`);
    const last = list[list.length - 1];
    return last?.info.role === 'assistant' && last.info.time?.completed;
  }, 'the reviewer reply');
  return reviewId;
}

async function openMenuItem(sessionId, name) {
  const row = page.locator(item(sessionId));
  await row.hover({ timeout: WAIT });
  await row.locator('[data-testid="session-menu"]').click({ timeout: WAIT });
  const menu = page.locator('[data-testid="menu"]');
  await menu.waitFor({ state: 'visible', timeout: WAIT });
  await menu.getByRole('menuitem', { name }).click({ timeout: WAIT });
}

test('two worktrees of one repository: reviewed where the work is, merged back, a conflict aborted, one removed', { timeout: 10 * 60_000 }, async () => {
  await page.goto(cc.url);
  await page.locator('[data-testid="sidebar"]').waitFor({ state: 'visible', timeout: WAIT });

  // ---- 1. two sessions, each in a new worktree made by the dialog --------------------------
  const one = await newSessionInWorktree('Greeting in English');
  assert.equal(one.name, 'greeting-in-english', 'the name is suggested from the title');
  const two = await newSessionInWorktree('Greeting in German');
  const dirOne = (await oc.json(`/session/${one.id}`)).directory;
  const dirTwo = (await oc.json(`/session/${two.id}`)).directory;
  assert.notEqual(dirOne, repo);
  assert.notEqual(dirOne, dirTwo);
  assert.equal(git(dirOne, 'symbolic-ref', '--short', 'HEAD').trim(), 'opencode/greeting-in-english');
  assert.equal(git(dirTwo, 'symbolic-ref', '--short', 'HEAD').trim(), 'opencode/greeting-in-german');
  const worktreesOnServer = await oc.json(`/experimental/worktree?directory=${encodeURIComponent(repo)}`);
  assert.ok(worktreesOnServer.includes(dirOne) && worktreesOnServer.includes(dirTwo), JSON.stringify(worktreesOnServer));

  // ---- 2. each writes the same file differently ---------------------------------------------
  await select(one.id);
  ms.script([{ tool: 'write', args: { filePath: path.join(dirOne, 'greeting.txt'), content: 'Hello\n' } }, { text: 'Wrote the English greeting.' }]);
  await prompt(one.id, 'Write the greeting in English.');
  await select(two.id);
  ms.script([{ tool: 'write', args: { filePath: path.join(dirTwo, 'greeting.txt'), content: 'Hallo\n' } }, { text: 'Wrote the German greeting.' }]);
  await prompt(two.id, 'Write the greeting in German.');
  assert.equal(fs.readFileSync(path.join(dirOne, 'greeting.txt'), 'utf8'), 'Hello\n');
  assert.equal(fs.readFileSync(path.join(dirTwo, 'greeting.txt'), 'utf8'), 'Hallo\n');
  assert.equal(fs.readFileSync(path.join(repo, 'greeting.txt'), 'utf8'), 'base\n', 'the main checkout is untouched');

  // ---- 3. each reviewed by a handoff whose review session is in the same worktree ----------
  const reviewOne = await handoff(one.id, 'HANDOFF-EN: greeting.txt says Hello.', 'REVIEW-EN: fine.');
  const reviewTwo = await handoff(two.id, 'HANDOFF-DE: greeting.txt says Hallo.', 'REVIEW-DE: fine.');
  assert.equal((await oc.json(`/session/${reviewOne}`)).directory, dirOne, "the review session works in the implementer's worktree");
  assert.equal((await oc.json(`/session/${reviewTwo}`)).directory, dirTwo, "the review session works in the implementer's worktree");
  const pin = await until(() => cc.api({ cmd: 'checkReviewPin', sessionId: reviewOne }), 'the pin of the first review');
  assert.deepEqual(pin.uncommitted, ['greeting.txt'], 'the pin fingerprints the worktree (the main checkout has no change)');
  assert.equal(pin.head, git(dirOne, 'rev-parse', 'HEAD').trim());

  // ---- 4. the sidebar groups both worktrees under the repository; rows show the branch -----
  const heading = page.locator('[data-testid="repo-heading"]');
  await heading.first().waitFor({ state: 'visible', timeout: WAIT });
  for (const dir of [dirOne, dirTwo]) {
    const group = page.locator(`[data-testid="session-group"][data-directory="${dir}"]`);
    await group.waitFor({ state: 'visible', timeout: WAIT });
    assert.equal(await group.getAttribute('data-worktree'), 'true');
    assert.equal((await group.locator('[data-testid="session-item"]').count()), 2, 'implementer and reviewer share the worktree, both shown');
  }
  await until(async () => (await page.locator(`${item(one.id)} [data-testid="branch-tag"]`).innerText()).includes('opencode/greeting-in-english'), 'the branch on the row');
  await screenshot(page, 'worktrees-sidebar');

  // ---- 5. the Changes tab of each: against its base branch and against HEAD -----------------
  for (const [id, word] of [[one.id, 'Hello'], [two.id, 'Hallo']]) {
    await select(id);
    await page.getByRole('button', { name: 'Changes', exact: true }).first().click({ timeout: WAIT });
    for (const scope of ['base', 'workingTree']) {
      await page.locator(`${panel} [data-testid="changes-scope"][data-scope="${scope}"]`).click({ timeout: WAIT });
      await until(async () => (await page.locator(panel).getAttribute('data-scope')) === scope && (await page.locator(panel).getAttribute('data-state')) === 'ready', `the ${scope} scope of ${word}`);
      await page.locator(`${panel} [data-testid="changes-file"][data-path="greeting.txt"]`).waitFor({ state: 'visible', timeout: WAIT });
      await page.locator(`${panel} [data-testid="changes-diff"]`).filter({ hasText: word }).waitFor({ timeout: WAIT });
    }
  }

  // ---- 6. the first merged back through the preview ------------------------------------------
  await openMenuItem(one.id, 'Merge back…');
  const dialog = page.locator('[data-testid="merge-dialog"]');
  await dialog.waitFor({ state: 'visible', timeout: WAIT });
  await dialog.locator('[data-testid="merge-uncommitted"]').waitFor({ state: 'visible', timeout: WAIT });
  assert.match(await dialog.locator('[data-testid="merge-into"]').innerText(), /opencode\/greeting-in-english into main/);
  assert.match(await dialog.locator('[data-testid="merge-uncommitted"]').innerText(), /greeting\.txt/);
  await dialog.locator('[data-testid="merge-file"][data-path="greeting.txt"]').waitFor({ state: 'visible', timeout: WAIT });
  await screenshot(page, 'worktrees-merge-preview');
  const headBefore = git(repo, 'rev-parse', 'HEAD').trim();
  await dialog.locator('[data-testid="merge-confirm"]').click();
  const result = dialog.locator('[data-testid="merge-result"]');
  await result.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await result.getAttribute('data-merged'), 'true', await result.innerText());
  assert.equal(fs.readFileSync(path.join(repo, 'greeting.txt'), 'utf8'), 'Hello\n', 'the base branch has the work');
  assert.notEqual(git(repo, 'rev-parse', 'HEAD').trim(), headBefore);
  assert.match(git(repo, 'log', '--format=%s', 'main'), /Greeting in English/);
  assert.equal(git(repo, 'status', '--porcelain'), '');

  // ...then the worktree and its branch removed from the same dialog.
  await dialog.locator('[data-testid="merge-remove-worktree"]').click();
  const confirm = page.locator('[data-testid="confirm-dialog"]');
  await confirm.waitFor({ state: 'visible', timeout: WAIT });
  await confirm.locator('[data-testid="confirm"]').click();
  await confirm.waitFor({ state: 'detached', timeout: WAIT });
  await until(() => !fs.existsSync(dirOne), 'the worktree folder to go');
  assert.equal(git(repo, 'branch', '--list', 'opencode/greeting-in-english').trim(), '', 'its branch is gone');
  await page.locator(`${item(one.id)} [data-testid="worktree-gone"]`).waitFor({ state: 'visible', timeout: WAIT });

  // ---- 7. the second merge reports the conflict and leaves the base clean --------------------
  await openMenuItem(two.id, 'Merge back…');
  await dialog.waitFor({ state: 'visible', timeout: WAIT });
  await dialog.locator('[data-testid="merge-files"], [data-testid="merge-uncommitted"]').first().waitFor({ state: 'visible', timeout: WAIT });
  const headMerged = git(repo, 'rev-parse', 'HEAD').trim();
  await dialog.locator('[data-testid="merge-confirm"]').click();
  await result.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await result.getAttribute('data-merged'), 'false');
  const words = await result.innerText();
  assert.match(words, /greeting\.txt changed differently on both sides/, words);
  assert.match(words, /CONFLICT/, words);
  assert.equal(git(repo, 'status', '--porcelain'), '', 'nothing is left half-applied');
  assert.equal(git(repo, 'rev-parse', 'HEAD').trim(), headMerged);
  assert.equal(fs.existsSync(path.join(repo, '.git', 'MERGE_HEAD')), false);
  assert.equal(fs.readFileSync(path.join(repo, 'greeting.txt'), 'utf8'), 'Hello\n');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  state.two = two;
  state.dirTwo = dirTwo;

  assert.deepEqual(pageErrors, []);
});

test('faults: a merge while the implementer runs is refused until idle; a taken branch and a folder outside git are refused; a dirty worktree needs a second yes; a started session moves with its changes', { timeout: 5 * 60_000 }, async () => {
  assert.ok(state.two, 'the first test left its second worktree');
  const { two, dirTwo } = state;

  // The implementer runs (the model holds its turn): the merge is refused, nothing changes.
  ms.script([{ hang: true }]);
  const headBefore = git(repo, 'rev-parse', 'HEAD').trim();
  await oc.json(`/session/${two.id}/prompt_async`, { method: 'POST', body: { parts: [{ type: 'text', text: 'Keep working.' }] } });
  await until(async () => (await cc.api({ cmd: 'snapshot' })).statuses[two.id]?.type === 'busy', 'the implementer to run');
  const busy = await refused({ cmd: 'mergeWorktree', sessionId: two.id, mode: 'merge' });
  assert.equal(busy.code, 'session_busy', JSON.stringify(busy));
  assert.equal(git(repo, 'rev-parse', 'HEAD').trim(), headBefore);
  await oc.json(`/session/${two.id}/abort`, { method: 'POST' });
  ms.reset();
  await until(async () => !(await cc.api({ cmd: 'snapshot' })).statuses[two.id] || (await cc.api({ cmd: 'snapshot' })).statuses[two.id].type === 'idle', 'the implementer to stop');
  const idle = await cc.api({ cmd: 'mergeWorktree', sessionId: two.id, mode: 'squash' });
  assert.equal(idle.merged, false, 'once idle the merge runs (and meets its conflict)');
  assert.deepEqual(idle.conflict.files, ['greeting.txt']);
  assert.equal(git(repo, 'status', '--porcelain'), '');

  // A branch that exists already is refused (the server would pick another name silently).
  const taken = await refused({ cmd: 'createWorktree', directory: repo, name: 'greeting-in-german' });
  assert.equal(taken.code, 'worktree_failed');
  assert.match(taken.message, /opencode\/greeting-in-german exists already/);

  // A folder outside git is refused as such; made a repository it is one.
  const plain = makeTempDir('crosscheck-plain-');
  const outside = await refused({ cmd: 'createWorktree', directory: plain, name: 'x' });
  assert.equal(outside.code, 'not_a_repository', JSON.stringify(outside));
  await cc.api({ cmd: 'initRepository', directory: plain });
  assert.ok(fs.existsSync(path.join(plain, '.git')), 'the folder is a repository now');

  // A worktree with uncommitted changes is removed only on the second confirmation.
  fs.writeFileSync(path.join(dirTwo, 'scratch.txt'), 'unsaved\n');
  const dirty = await refused({ cmd: 'removeWorktree', directory: dirTwo, force: false });
  assert.equal(dirty.code, 'worktree_dirty');
  assert.ok(fs.existsSync(dirTwo));
  await cc.api({ cmd: 'removeWorktree', directory: dirTwo, force: true });
  assert.equal(fs.existsSync(dirTwo), false);
  assert.equal(git(repo, 'branch', '--list', 'opencode/greeting-in-german').trim(), '');

  // A started session in the main checkout moves to a new worktree with its uncommitted change.
  const started = await oc.json(`/session?directory=${encodeURIComponent(repo)}`, { method: 'POST', body: { title: 'Say hi' } });
  fs.writeFileSync(path.join(repo, 'greeting.txt'), 'Hi\n');
  const moved = await cc.api({ cmd: 'moveToWorktree', sessionId: started.id, name: 'say-hi' });
  assert.notEqual(moved.directory, repo);
  assert.equal((await oc.json(`/session/${started.id}`)).directory, moved.directory, 'OpenCode has the session in the worktree');
  assert.equal(git(moved.directory, 'symbolic-ref', '--short', 'HEAD').trim(), 'opencode/say-hi');
  assert.equal(fs.readFileSync(path.join(moved.directory, 'greeting.txt'), 'utf8'), 'Hi\n', 'the change went along');
  assert.equal(git(repo, 'status', '--porcelain'), '', 'and left the main checkout');
});
