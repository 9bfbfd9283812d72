// A review pinned to the code it saw, end to end in headless Chromium against real OpenCode (in
// a git repository) and the scripted model server: the review tab shows what the review saw,
// and "Stale" with the changed files once the implementer's agent writes a file (OpenCode's
// file event) or a file changes on disk and the window regains focus.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { screenshot } from '../support/browser.mjs';
import { until as untilCondition } from '../support/page.mjs';
import { startStack } from '../support/stack.mjs';

const PASSWORD = 'e2e-secret';
const WAIT = 60_000;

let stack;
let ms;
let oc;
let cc;
let browser;
let page;
let pageErrors = [];
let events;
let repo;

const git = (...args) => execFileSync('git', args, { cwd: repo, stdio: 'pipe' }).toString();

before(async () => {
  repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'crosscheck-stale-')));
  git('init', '-q');
  git('config', 'user.email', 'test@example.com');
  git('config', 'user.name', 'Test');
  fs.mkdirSync(path.join(repo, 'src'));
  fs.writeFileSync(path.join(repo, 'src', 'lib.rs'), 'pub fn greet(name: &str) -> String {\n    format!("hi {name}")\n}\n');
  fs.writeFileSync(path.join(repo, 'README.md'), '# demo\n');
  git('add', '.');
  git('commit', '-q', '-m', 'first');
  stack = await startStack({ password: PASSWORD, opencode: { projectDir: repo }, events: true });
  ({ ms, oc, cc, browser, page, pageErrors, events } = stack);
});

after(async () => {
  await stack?.stop();
  if (repo) fs.rmSync(repo, { recursive: true, force: true });
});

const until = (probe, what, timeoutMs = WAIT) => untilCondition(probe, what, timeoutMs);

async function prompt(sessionId, text) {
  const from = events.events.length;
  await oc.fetch(`/session/${sessionId}/prompt_async`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ parts: [{ type: 'text', text }] }),
  });
  await events.waitForIdle(sessionId, { from, timeoutMs: WAIT });
}

test('a file changed after the review marks it stale, with the changed files', { timeout: 5 * 60_000 }, async () => {
  const t0 = Date.now();
  const original = await oc.json('/session', { method: 'POST', body: { title: 'Greet by name' } });
  const review = await oc.json('/session', {
    method: 'POST',
    body: { title: 'Review: Greet by name', metadata: { openchamber: { kind: 'review', originalSessionID: original.id } } },
  });
  await oc.json(`/session/${original.id}`, { method: 'PATCH', body: { metadata: { openchamber: { reviewSessionID: review.id } } } });
  assert.equal(review.directory, repo);

  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
  await page.locator(`[data-testid="session-item"][data-session-id="${review.id}"]`).click({ timeout: WAIT });
  const chat = page.locator(`main [data-testid="chat"][data-session-id="${review.id}"]`);
  await chat.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await chat.locator('[data-testid="review-pin"]').count(), 0, 'no pin before a reply');

  // The reviewer replies: the reply is pinned to HEAD with a clean tree.
  ms.script([{ text: 'REVIEW: greet() panics on an empty name.' }]);
  await prompt(review.id, 'Please review the handoff.');
  const pin = chat.locator('[data-testid="review-pin"]');
  await pin.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await pin.getAttribute('data-stale'), 'false');
  const head = git('rev-parse', 'HEAD').trim();
  assert.match(await pin.textContent(), new RegExp(`Reviewed the code at ${head.slice(0, 7)}`));

  // The implementer's agent writes a file through OpenCode's write tool: OpenCode's file event
  // makes the backend check again, without the page doing anything.
  ms.script([
    { tool: 'write', args: { filePath: path.join(repo, 'src', 'lib.rs'), content: 'pub fn greet(name: &str) -> String {\n    if name.is_empty() { return "hi".into(); }\n    format!("hi {name}")\n}\n' } },
    { text: 'Fixed the empty name.' },
  ]);
  await prompt(original.id, 'Fix the empty name.');
  assert.match(fs.readFileSync(path.join(repo, 'src', 'lib.rs'), 'utf8'), /is_empty/, 'the tool wrote the file');
  const codeEvents = events.events.filter((e) => ['file.edited', 'file.watcher.updated', 'session.diff'].includes(e.type)).map((e) => e.type);
  console.log(`code events seen: ${[...new Set(codeEvents)].join(', ')}`);
  await until(async () => (await pin.getAttribute('data-stale')) === 'true', 'the Stale mark');
  await chat.locator('[data-testid="review-stale"]').waitFor({ state: 'visible', timeout: WAIT });
  assert.match(await chat.locator('[data-testid="review-stale-files"]').textContent(), /src\/lib\.rs/);
  await screenshot(page, 'review-stale');

  // A change on disk that OpenCode does not report: seen when the window regains focus.
  fs.writeFileSync(path.join(repo, 'NOTES.txt'), 'an untracked note\n');
  await page.evaluate(() => window.dispatchEvent(new Event('focus')));
  await until(async () => /NOTES\.txt/.test(await chat.locator('[data-testid="review-stale-files"]').textContent()), 'the untracked file among the changed ones');
  assert.match(await chat.locator('[data-testid="review-stale-files"]').textContent(), /src\/lib\.rs/);

  // A new review reply is pinned to the code as it is now: no longer stale.
  ms.script([{ text: 'REVIEW-2: looks right now.' }]);
  await prompt(review.id, 'Please review again.');
  await until(async () => (await pin.getAttribute('data-stale')) === 'false', 'the fresh pin of the second reply');
  assert.match(await pin.textContent(), /2 uncommitted files/);
  assert.deepEqual(pageErrors, []);
  console.log(`stale review: ok in ${Date.now() - t0} ms`);
});
