// The Changes tab and the todo dock (issue 11), against the real `opencode serve` in a git
// repository with snapshots on, and the scripted model calling OpenCode's real tools: a `write`
// puts a file in the working tree, the tab opened by the session header's "Changes" button lists
// it and shows its new line; a second turn's file appears in the open tab without a reload or a
// click (OpenCode's file and diff events); Last turn shows only the second turn, Session both.
// A `todowrite` puts the agent's todos in the dock above the composer, collapsible and
// remembered. Prints the times it measures.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { screenshot } from '../support/browser.mjs';
import { makeTempDir } from '../support/cleanup.mjs';
import { opencodeConfig } from '../support/opencode.mjs';
import { until as untilCondition } from '../support/page.mjs';
import { startStack } from '../support/stack.mjs';

const PASSWORD = 'e2e-secret';
const WAIT = 60_000;

let stack;
let ms;
let oc;
let cc;
let events;
let browser;
let page;
let pageErrors = [];

function git(dir, ...args) {
  execFileSync('git', args, {
    cwd: dir,
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' },
    stdio: 'ignore',
  });
}

before(async () => {
  const repo = makeTempDir('crosscheck-changes-');
  git(repo, 'init', '-q');
  fs.writeFileSync(path.join(repo, 'README.md'), '# Demo\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'init');
  stack = await startStack({
    password: PASSWORD,
    events: true,
    opencode: (ms) => ({ projectDir: repo, config: { ...opencodeConfig(ms.url), snapshot: true } }),
  });
  ({ ms, oc, cc, browser, page, pageErrors, events } = stack);
});

after(() => stack?.stop());

const until = (probe, what, timeoutMs = WAIT) => untilCondition(probe, what, timeoutMs);
const chat = (id) => `[data-testid="chat"][data-session-id="${id}"]`;
const panel = '[data-testid="changes-panel"]';
const fileRow = (p) => `${panel} [data-testid="changes-file"][data-path="${p}"]`;

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

async function openSession(id) {
  await page.goto(cc.url);
  await page.locator(`[data-testid="session-item"][data-session-id="${id}"]`).click({ timeout: WAIT });
  await page.locator(`${chat(id)} [data-testid="composer-input"]`).waitFor({ state: 'visible', timeout: WAIT });
}

test('the Changes tab lists the file the agent wrote with its new line, and follows the next turn by itself', { timeout: 5 * 60_000 }, async () => {
  const session = await oc.json('/session', { method: 'POST', body: { title: 'Write a greeting' } });
  await openSession(session.id);
  ms.script([
    { tool: 'write', args: { filePath: path.join(oc.projectDir, 'src', 'greeting.txt'), content: 'hello from the agent\nsecond line\n' } },
    { text: 'Wrote src/greeting.txt.' },
  ]);
  await prompt(session.id, 'Please write a greeting file.');
  assert.equal(fs.readFileSync(path.join(oc.projectDir, 'src', 'greeting.txt'), 'utf8'), 'hello from the agent\nsecond line\n');

  const opened = Date.now();
  await page.getByRole('button', { name: 'Changes', exact: true }).click({ timeout: WAIT });
  await page.locator(`${panel} [data-testid="changes-scope"][data-scope="workingTree"]`).click({ timeout: WAIT });
  await page.locator(fileRow('src/greeting.txt')).waitFor({ state: 'visible', timeout: WAIT });
  console.log(`TIMING Changes button -> changed file listed: ${Date.now() - opened} ms`);
  const row = page.locator(fileRow('src/greeting.txt'));
  assert.equal(await row.getAttribute('data-status'), 'added');
  assert.match(await row.innerText(), /\+2/);
  const diff = page.locator(`${panel} [data-testid="changes-diff"][data-path="src/greeting.txt"]`);
  await diff.filter({ hasText: 'hello from the agent' }).waitFor({ state: 'visible', timeout: WAIT });
  assert.match(await diff.locator('[data-kind="add"]').first().innerText(), /hello from the agent/);

  // A second turn writes another file: the open tab lists it without a click or a reload.
  ms.script([
    { tool: 'write', args: { filePath: path.join(oc.projectDir, 'notes.md'), content: '# Notes\nthe second turn\n' } },
    { text: 'Wrote notes.md.' },
  ]);
  const before = Date.now();
  await prompt(session.id, 'Now add notes.');
  await page.locator(fileRow('notes.md')).waitFor({ state: 'visible', timeout: WAIT });
  console.log(`TIMING second turn idle -> its file in the open tab: ${Date.now() - before} ms (turn included)`);
  assert.equal(await page.locator(`${panel} [data-testid="changes-file"]`).count(), 2);

  // Keyboard: the list moves with the arrow keys and the diff follows.
  await page.locator(`${panel} [data-testid="changes-files"]`).focus();
  await page.keyboard.press('Home');
  await page.keyboard.press('ArrowDown');
  const second = await page.locator(`${panel} [data-testid="changes-diff"]`).getAttribute('data-path');
  assert.ok(['notes.md', 'src/greeting.txt'].includes(second), second);
  await page.keyboard.press('Home');
  const first = await page.locator(`${panel} [data-testid="changes-diff"]`).getAttribute('data-path');
  assert.notEqual(first, second, 'Home and ArrowDown select different files');

  // Last turn: only the second turn's file, from OpenCode's snapshots.
  await page.locator(`${panel} [data-testid="changes-scope"][data-scope="lastTurn"]`).click();
  await until(async () => (await page.locator(panel).getAttribute('data-scope')) === 'lastTurn' && (await page.locator(panel).getAttribute('data-state')) === 'ready', 'the last turn loaded');
  await page.locator(fileRow('notes.md')).waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await page.locator(`${panel} [data-testid="changes-file"]`).count(), 1);
  await page.locator(`${panel} [data-testid="changes-diff"]`).filter({ hasText: 'the second turn' }).waitFor({ timeout: WAIT });

  // Session: both turns.
  await page.locator(`${panel} [data-testid="changes-scope"][data-scope="session"]`).click();
  await until(async () => (await page.locator(panel).getAttribute('data-scope')) === 'session' && (await page.locator(`${panel} [data-testid="changes-file"]`).count()) === 2, 'both files in the session scope');

  // Back to the working tree for the screenshot, the first file selected.
  await page.locator(`${panel} [data-testid="changes-scope"][data-scope="workingTree"]`).click();
  await page.locator(fileRow('src/greeting.txt')).click({ timeout: WAIT });
  await page.locator(`${panel} [data-testid="changes-diff"][data-path="src/greeting.txt"]`).filter({ hasText: 'hello from the agent' }).waitFor({ timeout: WAIT });
  await screenshot(page, 'changes-tab');
  assert.deepEqual(pageErrors, []);
});

test("the todo dock shows the agent's todos above the composer, collapses and remembers it", { timeout: 5 * 60_000 }, async () => {
  const session = await oc.json('/session', { method: 'POST', body: { title: 'Plan the work' } });
  await openSession(session.id);
  assert.equal(await page.locator(`${chat(session.id)} [data-testid="todo-dock"]`).count(), 0, 'no dock without todos');
  const todos = [
    { content: 'Read the parser', status: 'completed', priority: 'high' },
    { content: 'Write the failing test', status: 'in_progress', priority: 'high' },
    { content: 'Fix the off-by-one', status: 'pending', priority: 'medium' },
    { content: 'Rewrite it in another language', status: 'cancelled', priority: 'low' },
  ];
  ms.script([{ tool: 'todowrite', args: { todos } }, { text: 'Here is the plan.' }]);
  const sent = Date.now();
  await prompt(session.id, 'Plan the fix.');
  const dock = page.locator(`${chat(session.id)} [data-testid="todo-dock"]`);
  await dock.waitFor({ state: 'visible', timeout: WAIT });
  console.log(`TIMING prompt -> todo dock shown: ${Date.now() - sent} ms (turn included)`);
  const items = dock.locator('[data-testid="todo-item"]');
  await until(async () => (await items.count()) === 4, 'four todos');
  const shown = [];
  for (let i = 0; i < 4; i++) {
    shown.push([(await items.nth(i).innerText()).trim(), await items.nth(i).getAttribute('data-status')]);
  }
  assert.deepEqual(shown, todos.map((t) => [t.content, t.status]));
  assert.equal((await dock.locator('[data-testid="todo-progress"]').innerText()).trim(), '1 of 4 done');
  const stored = await oc.json(`/session/${session.id}/todo`);
  assert.deepEqual(stored.map((t) => t.content), todos.map((t) => t.content), "the dock shows OpenCode's list");
  // The dock sits above the composer.
  const dockBox = await dock.boundingBox();
  const composerBox = await page.locator(`${chat(session.id)} [data-testid="composer-input"]`).boundingBox();
  assert.ok(dockBox && composerBox && dockBox.y + dockBox.height <= composerBox.y + 1, 'above the composer');
  // The dock alone: the side panel (still showing the other session's changes) is hidden.
  await page.getByRole('button', { name: 'Hide the context panel' }).click();
  await screenshot(page, 'todo-dock');

  const toggle = dock.locator('[data-testid="todo-toggle"]');
  await toggle.focus();
  await page.keyboard.press('Enter');
  await until(async () => (await dock.getAttribute('data-collapsed')) === 'true', 'collapsed');
  assert.equal(await items.count(), 0);
  assert.match(await toggle.innerText(), /Write the failing test/, 'collapsed, the task in progress is named');
  await openSession(session.id);
  await page.locator(`${chat(session.id)} [data-testid="todo-dock"][data-collapsed="true"]`).waitFor({ timeout: WAIT });
  await page.locator(`${chat(session.id)} [data-testid="todo-toggle"]`).click();
  await page.locator(`${chat(session.id)} [data-testid="todo-item"]`).first().waitFor({ timeout: WAIT });
  assert.deepEqual(pageErrors, []);
});
