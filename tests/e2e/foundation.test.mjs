// End-to-end foundation test of web mode: real OpenCode + scripted model + `crosscheck serve`
// + headless Chromium. DRAFT: it needs the built binary and UI (cargo build; make ui).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { screenshot } from '../support/browser.mjs';
import { subscribeEvents } from '../support/events.mjs';
import { expectedReply } from '../support/model-server.mjs';
import { startStack } from '../support/stack.mjs';

const PASSWORD = 'e2e-secret';
const TITLE = 'Foundation session';
const UI_TIMEOUT = 20_000;

let stack;
let ms;
let oc;
let cc;
let browser;
let page;
let session;

/** CSS for the sidebar entry of a session. */
const sessionItem = '[data-testid="session-item"]';

before(async () => {
  stack = await startStack({
    password: PASSWORD,
    // A title set at creation is kept: OpenCode only generates titles for default-titled sessions.
    before: async ({ oc }) => {
      session = await oc.json('/session', { method: 'POST', body: { title: TITLE } });
    },
  });
  ({ ms, oc, cc, browser, page } = stack);
});

after(() => stack?.stop());

/** Send a prompt through the composer and wait for the Nth assistant message to hold `text`. */
async function sendAndWait(prompt, nth, text) {
  const input = page.locator('[data-testid="composer-input"]');
  await input.waitFor({ state: 'visible', timeout: UI_TIMEOUT });
  await input.fill(prompt);
  await input.press('Enter');
  const assistant = page.locator('[data-testid="message-assistant"]').nth(nth);
  await assistant.filter({ hasText: text }).waitFor({ state: 'visible', timeout: UI_TIMEOUT });
  return assistant;
}

/** Wait until no session shows busy any more. */
async function waitNotBusy() {
  await page.waitForFunction(
    () => !document.querySelector('[data-testid="session-status"][data-status="busy"]'),
    null,
    { timeout: UI_TIMEOUT },
  );
}

test('the sidebar lists the session, and a prompt streams the reply', async () => {
  await page.goto(cc.url);
  const item = page.locator(sessionItem).filter({ hasText: TITLE });
  await item.first().waitFor({ state: 'visible', timeout: UI_TIMEOUT });
  await item.first().click();

  const prompt = 'Hello from the foundation test';
  const assistant = await sendAndWait(prompt, 0, 'FAKE-REPLY');
  assert.equal((await assistant.innerText()).trim().includes(expectedReply(prompt)), true);
  await waitNotBusy();
  await screenshot(page, 'web-chat');

  // What reached the model is what was typed.
  const chats = ms.chatRequests();
  assert.equal(chats.length, 1);
  assert.equal(chats[0].lastUserText, prompt);
});

test('an OpenCode restart mid-session: the UI reconnects and streams the next prompt', async () => {
  await oc.restart();
  // While OpenCode starts, its port accepts connections ~1-2 s before it answers, and requests
  // sent in that window never get an answer: a client without a short timeout there waits out
  // its full request timeout. 60 s leaves room for that; ready within a few seconds is the goal.
  const t0 = Date.now();
  await page.locator('[data-testid="server-status"][data-state="ready"]')
    .waitFor({ state: 'attached', timeout: 60_000 });
  console.log(`UI ready again ${Date.now() - t0} ms after OpenCode was back`);

  const events = await subscribeEvents(oc.url, { headers: oc.authHeaders });
  try {
    ms.script([{ text: 'SECOND-REPLY streamed slowly', chunkDelayMs: 150 }]);
    await sendAndWait('And once more after the restart', 1, 'SECOND-REPLY streamed slowly');
    await events.waitForIdle(session.id, { timeoutMs: 30_000 });
  } finally {
    events.close();
  }
  await waitNotBusy();
  assert.equal(await page.locator('[data-testid="session-status"][data-status="busy"]').count(), 0);

  // Both turns are stored server-side, in order.
  const messages = await oc.json(`/session/${session.id}/message`);
  assert.deepEqual(messages.map((m) => m.info.role), ['user', 'assistant', 'user', 'assistant']);
});

test('OpenCode restarted in the middle of a turn: no session stays busy', async () => {
  // The model never answers, so the turn is still running when the server goes away.
  ms.script([{ hang: true }]);
  const input = page.locator('[data-testid="composer-input"]');
  await input.fill('This turn will be cut off by a restart');
  await input.press('Enter');
  const busy = page.locator('[data-testid="session-status"][data-status="busy"]');
  await busy.first().waitFor({ state: 'visible', timeout: UI_TIMEOUT });
  // A running row is still: an animation there kept the page drawing every frame for as long
  // as agents ran (a spinner cost the browser 4-7 % of a core with five running rows).
  const moving = await page.locator('[data-testid="session-item"]').evaluateAll((rows) => rows.flatMap((r) => r.getAnimations({ subtree: true })).length);
  assert.equal(moving, 0, 'a running row animates');

  await oc.restart();
  ms.reset();
  await page.locator('[data-testid="server-status"][data-state="ready"]')
    .waitFor({ state: 'attached', timeout: 60_000 });
  // After the resync the server says nothing runs; the badge must go without any new event.
  await waitNotBusy();
  assert.equal(await busy.count(), 0);
  const statuses = await oc.json('/session/status');
  assert.equal(statuses[session.id], undefined, 'the server agrees the session is idle');
});
