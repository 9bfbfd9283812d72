// Tool parts and turns in Chromium against the real `opencode serve`: the scripted model writes a
// file, edits it, runs a command, sets todos and hands a task to a subagent. The chat shows the
// whole turn as one reply, the edit as its diff (coloured once the lazily loaded highlighter
// arrives, never in the first paint), the todos as a checklist, and a task card that opens the
// child session in the side panel.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { screenshot } from '../support/browser.mjs';
import { subscribeEvents } from '../support/events.mjs';
import { startStack } from '../support/stack.mjs';

const PASSWORD = 'e2e-secret';
const TITLE = 'Greeting work';
const WAIT = 30_000;

let stack;
let ms;
let oc;
let cc;
let browser;
let page;
let session;

before(async () => {
  stack = await startStack({
    password: PASSWORD,
    viewport: { width: 1400, height: 900 },
    before: async ({ oc }) => {
      session = await oc.json('/session', { method: 'POST', body: { title: TITLE } });
    },
  });
  ({ ms, oc, cc, browser, page } = stack);
});

after(() => stack?.stop());

const FILE = () => path.join(oc.projectDir, 'src', 'greet.ts');
const SOURCE = 'export function greet(name: string): string {\n  return `Hello, ${name}`;\n}\n';
const chat = () => `[data-testid="chat"][data-session-id="${session.id}"]`;

/** Names of the scripts the page has loaded so far. */
const loadedScripts = () =>
  page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.endsWith('.js')));

test('the first paint does not load the highlighter', async () => {
  await page.goto(cc.url);
  const item = page.locator('[data-testid="session-item"]').filter({ hasText: TITLE });
  await item.first().waitFor({ state: 'visible', timeout: WAIT });
  await item.first().click();
  await page.locator('[data-testid="composer-input"]').waitFor({ state: 'visible', timeout: WAIT });
  const scripts = await loadedScripts();
  assert.ok(scripts.length >= 1, 'the app script is loaded');
  assert.equal(scripts.filter((s) => /highlighter-/.test(s)).length, 0, `no highlighter yet: ${scripts.join(', ')}`);
});

test('a turn of tool calls reads as one reply: diff, command, checklist and task card', async () => {
  const t0 = Date.now();
  ms.script([
    { tool: 'write', args: { filePath: FILE(), content: SOURCE } },
    { tool: 'edit', args: { filePath: FILE(), oldString: 'Hello, ${name}', newString: 'Hello there, ${name}!' } },
    { tool: 'bash', args: { command: "printf '\\033[32mbuilt\\033[0m\\n'", description: 'Build' } },
    { tool: 'todowrite', args: { todos: [
      { content: 'Make greet() friendlier', status: 'completed', priority: 'high' },
      { content: 'Check the greeting', status: 'in_progress', priority: 'medium' },
    ] } },
    { tool: 'task', args: { description: 'Check the greeting', prompt: 'Read src/greet.ts and say whether it greets.', subagent_type: 'general' } },
    { text: 'It greets.' },
    { text: 'Done: greet() now says hello there.' },
  ]);
  const events = await subscribeEvents(oc.url, { headers: oc.authHeaders });
  try {
    const input = page.locator('[data-testid="composer-input"]');
    await input.fill('Make greet() friendlier and track it.');
    await input.press('Enter');
    await events.waitForIdle(session.id, { timeoutMs: 90_000 });
  } finally {
    events.close();
  }
  const reply = page.locator(`${chat()} [data-testid="message-assistant"]`).filter({ hasText: 'Done: greet() now says hello there.' });
  await reply.waitFor({ state: 'visible', timeout: WAIT });
  console.log(`turn of 6 steps shown ${Date.now() - t0} ms after sending`);

  // The server stored one user message and several assistant steps naming it as their parent.
  const stored = await oc.json(`/session/${session.id}/message`);
  const steps = stored.filter((m) => m.info.role === 'assistant');
  assert.ok(steps.length >= 6, `steps: ${steps.length}`);
  assert.ok(steps.every((m) => m.info.parentID === stored[0].info.id));

  // One reply in the chat, one action row, the turn's usage in its header.
  assert.equal(await page.locator(`${chat()} [data-testid="message-assistant"]`).count(), 1);
  assert.equal(await reply.getAttribute('data-steps'), String(steps.length));
  assert.equal(await reply.locator('[data-testid="copy-message"]').count(), 1);
  assert.match(await reply.locator('[data-testid="turn-usage"]').innerText(), /tokens/);
  assert.match(await page.locator(`${chat()} [data-testid="session-usage"]`).innerText(), /tokens/);

  // The edit shows its diff: the old line out, the new one in.
  const edit = reply.locator('[data-testid="tool-part"][data-tool="edit"]');
  const added = edit.locator('[data-testid="diff-line"][data-kind="add"]');
  await added.first().waitFor({ state: 'visible', timeout: WAIT });
  assert.deepEqual(await added.allInnerTexts().then((l) => l.map((s) => s.split('\t').pop()?.trim())), ['return `Hello there, ${name}!`;']);
  const removed = await edit.locator('[data-testid="diff-line"][data-kind="del"]').allInnerTexts();
  assert.equal(removed.length, 1);
  assert.match(removed[0], /return `Hello, \$\{name\}`;/);
  assert.equal((await edit.locator('[data-testid="diff-counts"]').innerText()).replace(/\s+/g, ''), '+1−1');
  assert.equal(await edit.getByText('Edit applied successfully').count(), 0);
  // Colours arrive after paint, from the highlighter chunk loaded now.
  await edit.locator('.hljs-keyword').first().waitFor({ state: 'attached', timeout: WAIT });
  assert.ok((await loadedScripts()).some((s) => /highlighter-/.test(s)), 'the highlighter chunk was loaded on demand');

  // The write is a new file of added lines; the command shows its output without escapes.
  assert.equal(await reply.locator('[data-testid="tool-part"][data-tool="write"] [data-testid="diff-line"][data-kind="add"]').count(), 3);
  const bash = reply.locator('[data-testid="tool-part"][data-tool="bash"]');
  assert.equal(await bash.locator('[data-testid="bash-command"]').innerText(), "$ printf '\\033[32mbuilt\\033[0m\\n'");
  assert.equal((await bash.locator('[data-testid="ansi-output"]').innerText()).trim(), 'built');

  // Todos as a checklist.
  const todos = reply.locator('[data-testid="tool-part"][data-tool="todowrite"] [data-testid="todo-item"]');
  assert.deepEqual(await todos.evaluateAll((els) => els.map((e) => e.getAttribute('data-status'))), ['completed', 'in_progress']);

  await edit.scrollIntoViewIfNeeded();
  await page.evaluate((sel) => document.querySelector(sel)?.scrollIntoView({ block: 'center' }), `${chat()} [data-testid="tool-part"][data-tool="edit"]`);
  await screenshot(page, 'edit-diff');
});

test('the task card opens the child session in the side panel', async () => {
  const card = page.locator(`${chat()} [data-testid="task-card"]`);
  await card.waitFor({ state: 'visible', timeout: WAIT });
  const child = await card.getAttribute('data-session-id');
  assert.match(child ?? '', /^ses_/);
  const children = await oc.json(`/session/${session.id}/children`);
  assert.deepEqual(children.map((c) => c.id), [child]);
  assert.match(await card.innerText(), /Check the greeting/);
  assert.match(await card.innerText(), /It greets\./);

  await card.evaluate((el) => el.scrollIntoView({ block: 'center' }));
  const open = card.getByRole('button', { name: /Open the subagent session/ });
  await open.click();
  const tab = page.locator(`[data-testid="context-tab"][data-key="session:${child}"]`);
  await tab.waitFor({ state: 'visible', timeout: WAIT });
  const panelChat = page.locator(`[data-testid="chat"][data-session-id="${child}"]`);
  await panelChat.locator('[data-testid="message-assistant"]').filter({ hasText: 'It greets.' }).waitFor({ state: 'visible', timeout: WAIT });
  await screenshot(page, 'task-card');
});
