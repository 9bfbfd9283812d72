// A person's line comments and a loop's cost against the real `opencode serve` with the scripted
// model: two comments picked in a tool part's diff (mouse and keyboard) stay in the batch while
// the server is down, then reach the implementer in words (read back through OpenCode's API) and
// turn addressed after its edit; a review loop with a token budget stops as `budget` with its
// figures (the model has a price, so OpenCode's messages carry a cost).
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launchBrowser, screenshot } from '../support/browser.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { opencodeConfig, startOpencode } from '../support/opencode.mjs';

const PASSWORD = 'e2e-secret';
const WAIT = 60_000;
const SOURCE = 'export function greet(name: string): string {\n  return `Hello, ${name}`;\n}\n\nexport function add(a: number, b: number): number {\n  return a + b;\n}\n';
const EDITED = 'export function greet(name: string): string {\n  return name ? `Hello, ${name}` : "Hello, stranger";\n}\n\nexport function add(a: number, b: number): number {\n  return Math.trunc(a) + Math.trunc(b);\n}\n';
const FIRST = 'Say hello to a stranger when the name is empty.';
const SECOND = 'Whole numbers only, please.';
const HANDOFF = 'HANDOFF: greet() now takes a name.';
const ROUND_1 = 'One thing.\n\nFINDINGS\n- [F1] major src/greet.ts:2 — greet() accepts an empty name\nVERDICT: FLAGS (1)';

let ms;
let oc;
let cc;
let browser;
let page;
const pageErrors = [];

before(async () => {
  ms = await startModelServer();
  // A price per million tokens: OpenCode then puts a cost on every assistant message.
  const config = opencodeConfig(ms.url);
  config.provider.fake.models['fake-model'].cost = { input: 3, output: 15 };
  oc = await startOpencode({ modelUrl: ms.url, password: PASSWORD, config });
  cc = await startCrosscheck({ opencodeUrl: oc.url, password: PASSWORD });
  browser = await launchBrowser({ viewport: { width: 1400, height: 900 } });
  page = await browser.newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
});

after(async () => {
  await browser?.close();
  await cc?.stop();
  await oc?.dispose();
  await ms?.close();
});

const chat = (id) => `[data-testid="chat"][data-session-id="${id}"]`;
const item = (id) => `[data-testid="session-item"][data-session-id="${id}"]`;

async function until(probe, what, timeoutMs = WAIT) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    last = await probe();
    if (last) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function open(sessionId) {
  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
  await page.locator(item(sessionId)).click({ timeout: WAIT });
  await page.locator(`${chat(sessionId)} [data-testid="composer-input"]`).waitFor({ state: 'visible', timeout: WAIT });
}

test('two line comments survive the server being down, reach the implementer in words and turn addressed', async () => {
  const session = await oc.json('/session', { method: 'POST', body: { title: 'Greet with comments' } });
  const file = path.join(oc.projectDir, 'src', 'greet.ts');
  ms.script([{ tool: 'write', args: { filePath: file, content: SOURCE } }, { text: 'Wrote greet and add.' }]);
  await open(session.id);
  const input = page.locator(`${chat(session.id)} [data-testid="composer-input"]`);
  await input.fill('Write greet() and add().');
  await input.press('Enter');
  const write = page.locator(`${chat(session.id)} [data-testid="tool-part"][data-tool="write"]`);
  const pickLine = (n) => write.locator(`[data-testid="diff-line-pick"][data-line="${n}"]`);
  await pickLine(2).waitFor({ state: 'visible', timeout: WAIT });

  // One line by mouse.
  await pickLine(2).click();
  await write.locator('[data-testid="comment-text"]').fill(FIRST);
  await write.locator('[data-testid="comment-add"]').click();
  const batch = page.locator(`${chat(session.id)} [data-testid="comment-batch"]`);
  await page.locator(`${chat(session.id)} [data-testid="comment-batch"][data-drafts="1"]`).waitFor({ timeout: WAIT });
  // A range by keyboard: Enter on line 5, Shift+Enter on line 6, Ctrl+Enter to add.
  await pickLine(5).focus();
  await page.keyboard.press('Enter');
  await pickLine(6).focus();
  await page.keyboard.press('Shift+Enter');
  assert.equal(await pickLine(5).getAttribute('aria-pressed'), 'true');
  assert.equal(await pickLine(6).getAttribute('aria-pressed'), 'true');
  await write.locator('[data-testid="comment-text"]').fill(SECOND);
  await page.keyboard.press('Control+Enter');
  await page.locator(`${chat(session.id)} [data-testid="comment-batch"][data-drafts="2"]`).waitFor({ timeout: WAIT });
  assert.equal((await batch.locator('[data-testid="comments-send"]').innerText()).trim(), 'Send 2 comments');
  await page.evaluate((sel) => document.querySelector(sel)?.scrollIntoView({ block: 'center' }), `${chat(session.id)} [data-testid="tool-part"][data-tool="write"]`);
  await screenshot(page, 'comment-batch');

  // The first turn ends before the server goes down: killed mid-turn, OpenCode would leave the
  // turn's last scripted reply in the queue for the next turn to take.
  await page
    .locator(`${chat(session.id)} [data-testid="message-assistant"]`, { hasText: 'Wrote greet and add.' })
    .waitFor({ timeout: WAIT });
  await until(async () => ms.queueLength() === 0, 'the first turn to take its scripted replies');

  // The server goes down: sending fails and the batch is kept (in SQLite, not in the window).
  const before = (await oc.json(`/session/${session.id}/message`)).length;
  await oc.stop();
  // The window sees the server gone before it is back (else "ready" below would be the old one).
  await page.locator('[data-testid="server-status"]:not([data-state="ready"])').waitFor({ state: 'attached', timeout: WAIT });
  await assert.rejects(cc.api({ cmd: 'sendComments', sessionId: session.id }));
  const kept = await cc.api({ cmd: 'listComments', sessionId: session.id });
  assert.deepEqual(kept.map((c) => [c.path, c.startLine, c.endLine, c.status]), [
    ['src/greet.ts', 2, 2, 'draft'],
    ['src/greet.ts', 5, 6, 'draft'],
  ]);
  await oc.restart();
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ timeout: WAIT });

  // Back: the implementer edits both places.
  ms.script([{ tool: 'write', args: { filePath: file, content: EDITED } }, { text: 'Handled both comments.' }]);
  const from = ms.requests.length;
  await batch.locator('[data-testid="comments-send"]').click();
  await page
    .locator(`${chat(session.id)} [data-testid="message-assistant"]`, { hasText: 'Handled both comments.' })
    .waitFor({ timeout: WAIT })
    .catch(async (err) => {
      const comments = await cc.api({ cmd: 'listComments', sessionId: session.id }).catch((e) => String(e));
      const stored = await oc.json(`/session/${session.id}/message`).catch((e) => String(e));
      const toasts = await page.locator('[data-testid="toast"]').allInnerTexts().catch(() => []);
      err.message += `\ncomments: ${JSON.stringify(comments)}\nmessages: ${JSON.stringify(stored).slice(0, 3000)}\ntoasts: ${JSON.stringify(toasts)}\nmodel requests: ${ms.requests.length - from}`;
      throw err;
    });
  await until(async () => (await batch.locator('[data-testid="comment-row"][data-status="addressed"]').count()) === 2, 'both comments addressed')
    .catch(async (err) => {
      const comments = await cc.api({ cmd: 'listComments', sessionId: session.id }).catch((e) => String(e));
      const snapshot = await cc.api({ cmd: 'snapshot' }).catch(() => null);
      const held = await cc.api({ cmd: 'openSession', sessionId: session.id }).catch((e) => ({ messages: [], error: String(e) }));
      const line = (m) => `${m.info.id}:${m.info.role}${m.info.time?.completed ? ':done' : ''}`;
      const kept = (held.messages ?? []).map(line);
      const served = await oc.json(`/session/${session.id}/message`).then((all) => all.map(line).join(' ')).catch((e) => String(e));
      err.message += `\nCrosscheck holds: ${kept.join(' ')}\nOpenCode has: ${served}`;
      const onDisk = await import('node:fs').then((fs) => fs.readFileSync(file, 'utf8')).catch((e) => String(e));
      err.message += `\ncomments: ${JSON.stringify(comments)}\nfile: ${JSON.stringify(onDisk)}`
        + `\nstatus: ${JSON.stringify(snapshot?.statuses?.[session.id] ?? 'idle')}, error: ${JSON.stringify(snapshot?.sessionErrors?.[session.id] ?? null)}`
        + `\n${cc.output().slice(-3000)}`;
      throw err;
    });

  // What the implementer got, as OpenCode keeps it: one user message in words.
  const messages = await oc.json(`/session/${session.id}/message`);
  const users = messages.slice(before).filter((m) => m.info.role === 'user');
  assert.equal(users.length, 1, 'the batch went once');
  const text = users[0].parts.filter((p) => p.type === 'text').map((p) => p.text).join('\n');
  assert.ok(text.startsWith('I went through your changes and left comments on some lines below.'), text);
  assert.ok(
    text.endsWith(`src/greet.ts, line 2:\n>   return \`Hello, \${name}\`;\n${FIRST}\n\nsrc/greet.ts, lines 5-6:\n> export function add(a: number, b: number): number {\n>   return a + b;\n${SECOND}`),
    text,
  );
  for (const word of ['cmt_', 'ses_', 'msg_', 'metadata']) assert.ok(!text.includes(word), `${word} in ${text}`);
  assert.ok(ms.requests.slice(from).some((r) => r.kind === 'chat' && r.lastUserText.includes(SECOND)), 'the model read the comments');
  const tracked = await cc.api({ cmd: 'listComments', sessionId: session.id });
  assert.deepEqual(tracked.map((c) => c.status), ['addressed', 'addressed']);
  assert.deepEqual(pageErrors, []);
});

test('a loop with a token budget stops as budget with its figures', async () => {
  const original = await oc.json('/session', { method: 'POST', body: { title: 'Greet on a budget' } });
  assert.equal(ms.queueLength(), 0, 'the test before left no scripted reply for this one to take');
  const from = ms.requests.length;
  ms.script([{ text: HANDOFF }, { text: ROUND_1 }]);
  await open(original.id);
  const input = page.locator(`${chat(original.id)} [data-testid="composer-input"]`);
  await input.fill('/handoff-review');
  const menu = page.locator(`${chat(original.id)} [data-testid="command-menu"]`);
  await menu.waitFor({ state: 'visible', timeout: WAIT });
  await menu.locator('[data-testid="command-item"][data-name="handoff-review"]').click({ timeout: WAIT });
  await until(async () => (await input.inputValue()).trim() === '/handoff-review', 'the picked command');
  await input.press('Enter');
  const dialog = page.locator('[data-testid="handoff-dialog"]');
  await dialog.waitFor({ state: 'visible', timeout: WAIT });
  await dialog.getByLabel('Automatic review loop').check();
  await dialog.locator('[data-testid="handoff-budget-tokens"]').fill('1000');
  await dialog.locator('[data-testid="handoff-start"]').click({ timeout: WAIT });
  await dialog.waitFor({ state: 'detached', timeout: WAIT });

  const stopped = page.locator(`${chat(original.id)} [data-testid="loop-progress"][data-state="stopped"]`);
  await stopped.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await stopped.getAttribute('data-reason'), 'budget');
  const loops = await cc.api({ cmd: 'listLoops' });
  const loop = loops.find((l) => l.originalSessionId === original.id);
  assert.equal(loop.stop.reason, 'budget');
  assert.deepEqual(loop.budget, { tokens: 1000 }, 'the limits not set are left out');
  assert.equal(loop.costs.length, 1);
  const [round] = loop.costs;
  assert.ok(round.tokens > 1000, `round 1 used ${round.tokens} tokens`);
  assert.ok(round.costMicros > 0, 'the priced model has a cost');
  assert.ok(round.ms > 0);
  const dollars = (Math.floor(round.costMicros / 100) / 10_000).toFixed(4);
  assert.match(loop.stop.detail, new RegExp(`^the budget of 1000 tokens is spent: ${round.tokens} tokens, \\$${dollars.replace('.', '\\.')}, \\d+ (min \\d+ )?s over 1 round\\(s\\)$`));
  // Nothing went to the implementer once the budget was spent.
  const chats = ms.requests.slice(from).filter((r) => r.kind === 'chat');
  assert.equal(chats.length, 2, 'the handoff and the review only');

  // The figures on the loop's progress, per round, and in the review tab's Findings header.
  const cost = page.locator(`${chat(original.id)} [data-testid="loop-cost"]`);
  assert.equal(await cost.getAttribute('data-tokens'), String(round.tokens));
  assert.match(await cost.innerText(), /tokens · \$0\.\d{4} · /);
  assert.equal(await page.locator(`${chat(original.id)} [data-testid="loop-round-cost"][data-round="1"]`).count(), 1);
  await page.locator(item(loop.reviewSessionId)).click({ timeout: WAIT });
  // The review tab may show the chat in the centre and in the side panel: either copy will do.
  const header = page.locator(`${chat(loop.reviewSessionId)} [data-testid="findings-cost"]`).first();
  await header.waitFor({ state: 'visible', timeout: WAIT });
  assert.match(await header.innerText(), new RegExp(`^Loop: ${round.tokens.toLocaleString('en')} tokens · \\$`));
  await screenshot(page, 'loop-cost');
  assert.deepEqual(pageErrors, []);
});
