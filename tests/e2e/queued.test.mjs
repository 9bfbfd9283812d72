// A prompt typed while the agent works, in Chromium against the real `opencode serve`: it shows
// as queued with a Cancel, goes out when the turn ends, and Stop cancels it and says so. OpenCode
// drops a prompt it holds behind a stopped turn without a reply (checked here through its API),
// so the prompt must not reach it while the turn runs, and Stop must not pretend it was sent.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { screenshot } from '../support/browser.mjs';
import { expectedReply } from '../support/model-server.mjs';
import { sleep, until } from '../support/page.mjs';
import { startStack } from '../support/stack.mjs';

const PASSWORD = 'e2e-secret';
const UI_TIMEOUT = 20_000;

let stack;
let ms;
let oc;
let cc;
let browser;
let page;
let events;

before(async () => {
  stack = await startStack({ password: PASSWORD, events: true });
  ({ ms, oc, cc, browser, page, events } = stack);
  await page.goto(cc.url);
});

after(() => stack?.stop());

/** A new titled session (no title call to the model), opened in the centre. */
async function openNew(title) {
  const session = await oc.json('/session', { method: 'POST', body: { title } });
  const item = page.locator(`[data-testid="session-item"][data-session-id="${session.id}"]`);
  await item.waitFor({ timeout: UI_TIMEOUT });
  await item.click();
  await page.locator(`[data-testid="chat"][data-session-id="${session.id}"]`).waitFor({ timeout: UI_TIMEOUT });
  return session;
}

async function type(text) {
  const input = page.locator('[data-testid="composer-input"]');
  await input.fill(text);
  await input.press('Enter');
}

/** OpenCode's user messages of a session, as their visible text. */
async function userTexts(id) {
  const list = await oc.json(`/session/${id}/message`);
  return list
    .filter((m) => m.info.role === 'user')
    .map((m) => m.parts.filter((p) => p.type === 'text' && !p.synthetic).map((p) => p.text).join(''));
}

const modelSaw = (text) => ms.chatRequests().some((r) => (r.lastUserText ?? '').includes(text));

test('a prompt typed during a turn is marked queued and Stop cancels it, saying so', async () => {
  const session = await openNew('Queued then stopped');
  ms.script([{ hang: true }]);
  await type('Start the long job');
  await page.locator('[data-testid="abort"]').waitFor({ timeout: UI_TIMEOUT });

  const queuedText = 'Then write the docs for it';
  await type(queuedText);
  const queued = page.locator('[data-testid="composer-queued"]');
  await queued.waitFor({ timeout: UI_TIMEOUT });
  assert.equal(await queued.locator('[data-testid="queued-mark"]').textContent(), 'Queued');
  assert.equal((await queued.locator('[data-testid="composer-unqueue"]').textContent()).trim(), 'Cancel');
  assert.match(await page.locator('[data-testid="composer-offline"]').textContent(), /1 queued; sent when the agent has finished this turn/);
  await screenshot(page, 'queued-prompt');
  // It waits here, not in OpenCode's queue, where a Stop would drop it silently.
  await sleep(500);
  assert.deepEqual(await userTexts(session.id), ['Start the long job']);

  const from = events.events.length;
  await page.locator('[data-testid="abort"]').click();
  await events.waitForIdle(session.id, { from, timeoutMs: 30_000 });
  await until(
    () => page.evaluate(() => window.__toasts.some((t) => t.text.includes('Stopped; 1 queued prompt was cancelled.'))),
    'the Stop toast naming the cancelled prompt',
    UI_TIMEOUT,
  );
  await queued.waitFor({ state: 'detached', timeout: UI_TIMEOUT });
  assert.equal(await page.locator('[data-testid="composer-input"]').inputValue(), queuedText);
  await screenshot(page, 'queued-prompt-stopped');
  // What the toast says is what happened: nothing of it reached OpenCode or the model.
  await sleep(1500);
  assert.deepEqual(await userTexts(session.id), ['Start the long job']);
  assert.equal(modelSaw(queuedText), false);
  await page.locator('[data-testid="composer-input"]').fill('');
});

test('a queued prompt goes out when the turn ends, and Cancel takes one back', async () => {
  const session = await openNew('Queued then sent');
  ms.reset();
  ms.script([{ text: 'Working on it now, step by step, slowly.', chunkDelayMs: 400 }]);
  await type('Do the first part');
  await page.locator('[data-testid="abort"]').waitFor({ timeout: UI_TIMEOUT });
  await type('Take this one back');
  await type('And then the second part');
  const queued = page.locator('[data-testid="composer-queued"]');
  await until(async () => (await queued.count()) === 2, 'two queued prompts', UI_TIMEOUT);
  await queued.filter({ hasText: 'Take this one back' }).locator('[data-testid="composer-unqueue"]').click();
  assert.equal(await page.locator('[data-testid="composer-input"]').inputValue(), 'Take this one back');
  await page.locator('[data-testid="composer-input"]').fill('');

  await page.locator('[data-testid="message-assistant"]').filter({ hasText: expectedReply('And then the second part') })
    .waitFor({ timeout: 60_000 });
  assert.deepEqual(await userTexts(session.id), ['Do the first part', 'And then the second part']);
  assert.equal(modelSaw('Take this one back'), false);
  assert.equal(await queued.count(), 0);
});
