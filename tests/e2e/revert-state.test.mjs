// After "Revert to here", in Chromium against the real `opencode serve` (a git folder with
// snapshots): the Changes tab's Last turn and Session scopes, the todo dock and the session's
// token count no longer show the reverted turn. OpenCode keeps listing the reverted messages,
// keeps the todo list the reverted turn wrote and keeps its tokens in the session's sum, so each
// of these is checked against what the chat shows.
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
import { opencodeConfig, startOpencode } from '../support/opencode.mjs';
import { newRecordedPage, until as untilCondition } from '../support/page.mjs';

const PASSWORD = 'e2e-secret';
const WAIT = 60_000;

let ms;
let oc;
let cc;
let browser;
let page;
let events;

function git(dir, ...args) {
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: dir, stdio: 'pipe' });
}

before(async () => {
  ms = await startModelServer();
  const repo = makeTempDir('crosscheck-revert-');
  git(repo, 'init', '-q');
  fs.writeFileSync(path.join(repo, 'README.md'), '# Demo\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'init');
  oc = await startOpencode({ modelUrl: ms.url, password: PASSWORD, projectDir: repo, config: { ...opencodeConfig(ms.url), snapshot: true } });
  events = await subscribeEvents(oc.url, { headers: oc.authHeaders });
  cc = await startCrosscheck({ opencodeUrl: oc.url, password: PASSWORD });
  browser = await launchBrowser();
  ({ page } = await newRecordedPage(browser));
});

after(async () => {
  events?.close();
  await browser?.close();
  await cc?.stop();
  await oc?.dispose();
  await ms?.close();
});

const until = (probe, what, timeoutMs = WAIT) => untilCondition(probe, what, timeoutMs);
const panel = '[data-testid="changes-panel"]';

async function prompt(sessionId, text) {
  const from = events.events.length;
  const input = page.locator('[data-testid="composer-input"]');
  await input.fill(text);
  await input.press('Enter');
  await events.waitFor((e) => e.type === 'session.idle' && e.properties.sessionID === sessionId, { from, timeoutMs: WAIT, what: `the turn of "${text}"` });
}

async function changedFiles(scope) {
  await page.locator(`${panel} [data-testid="changes-scope"][data-scope="${scope}"]`).click();
  await until(async () => (await page.locator(panel).getAttribute('data-scope')) === scope && (await page.locator(panel).getAttribute('data-loading')) === 'false', `the ${scope} scope loaded`);
  return page.locator(`${panel} [data-testid="changes-file"]`).evaluateAll((rows) => rows.map((r) => r.getAttribute('data-path')).sort());
}

/** The session's token count as the header shows it ("3.2K tokens"). */
async function tokens() {
  const m = (await page.locator('[data-testid="session-usage"]').innerText()).match(/([\d.,]+)\s*(K?)\s*tokens/);
  return m ? parseFloat(m[1].replace(/,/g, '')) * (m[2] ? 1000 : 1) : NaN;
}

test('Revert to here takes the reverted turn out of Changes, the todo dock and the token count', { timeout: 5 * 60_000 }, async () => {
  const session = await oc.json('/session', { method: 'POST', body: { title: 'Two turns to revert' } });
  await page.goto(cc.url);
  await page.locator(`[data-testid="session-item"][data-session-id="${session.id}"]`).click({ timeout: WAIT });

  ms.script([
    { tool: 'todowrite', args: { todos: [{ content: 'Write the first file', status: 'completed', priority: 'high' }] } },
    { tool: 'write', args: { filePath: path.join(oc.projectDir, 'first.txt'), content: 'one\n' } },
    { text: 'Wrote first.txt.' },
  ]);
  await prompt(session.id, 'Write the first file.');
  ms.script([
    { tool: 'todowrite', args: { todos: [
      { content: 'Write the first file', status: 'completed', priority: 'high' },
      { content: 'Write the second file', status: 'completed', priority: 'high' },
      { content: 'Ship it', status: 'pending', priority: 'low' },
    ] } },
    { tool: 'write', args: { filePath: path.join(oc.projectDir, 'second.txt'), content: 'two\n' } },
    { text: 'Wrote second.txt.' },
  ]);
  await prompt(session.id, 'Write the second file.');

  const dock = page.locator('[data-testid="todo-dock"]');
  await until(async () => (await dock.locator('[data-testid="todo-item"]').count()) === 3, 'the second turn\'s todos');
  await page.getByRole('button', { name: 'Changes', exact: true }).click({ timeout: WAIT });
  assert.deepEqual(await changedFiles('lastTurn'), ['second.txt']);
  const before = await tokens();
  assert.ok(before > 0, 'a token count is shown');

  const second = page.locator('[data-testid="message-user"]').filter({ hasText: 'Write the second file.' });
  await second.hover();
  await second.locator('[data-testid="revert-message"]').click();
  await page.locator('[data-testid="confirm-dialog"] [data-testid="confirm"]').click();
  await page.locator('[data-testid="revert-bar"]').waitFor({ timeout: WAIT });
  // OpenCode still lists the reverted messages and keeps the second todo list.
  assert.equal((await oc.json(`/session/${session.id}/todo`)).length, 3);

  await until(async () => (await dock.locator('[data-testid="todo-item"]').count()) === 1, 'the todo list as it stood before the reverted turn');
  assert.match(await dock.innerText(), /Write the first file/);
  await until(async () => JSON.stringify(await changedFiles('lastTurn')) === JSON.stringify(['first.txt']), 'the last turn is the first one');
  assert.deepEqual(await changedFiles('session'), ['first.txt']);
  await until(async () => (await tokens()) < before, 'the token count without the reverted reply');
  // The bar counts the prompt undone, not every step of its reply.
  assert.match(await page.locator('[data-testid="revert-bar"]').innerText(), /1 prompt and its reply reverted/);
  await changedFiles('lastTurn');
  await screenshot(page, 'revert-refreshes-changes-todos-tokens');
});
