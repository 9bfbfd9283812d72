// Calm, precise feedback against the real `opencode serve`: Stop shows "Stopped" (OpenCode
// reports an abort as MessageAbortedError), a server that is gone turns the connection pill red
// with the reason and a countdown while a prompt typed meanwhile waits and is sent after the
// reconnect, and repeated failures collapse into one toast with a count.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { subscribeEvents } from '../support/events.mjs';
import { expectedReply } from '../support/model-server.mjs';
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
let pageErrors;

before(async () => {
  stack = await startStack({ password: PASSWORD });
  ({ ms, oc, cc, browser, page, pageErrors } = stack);
});

after(() => stack?.stop());

const until = (probe, what, timeoutMs = WAIT) => untilCondition(probe, what, timeoutMs);
const chat = (id) => `[data-testid="chat"][data-session-id="${id}"]`;
const toasts = () => page.evaluate(() => window.__toasts ?? []);

async function open(id) {
  await page.locator(`[data-testid="session-item"][data-session-id="${id}"]`).click({ timeout: WAIT });
  await page.locator(`${chat(id)} [data-testid="composer-input"]`).waitFor({ state: 'visible', timeout: WAIT });
}

async function send(id, text) {
  const input = page.locator(`${chat(id)} [data-testid="composer-input"]`);
  await input.fill(text);
  await input.press('Enter');
}

test('Stop shows "Stopped", not an error', async () => {
  const session = await oc.json('/session', { method: 'POST', body: { title: 'Stop me' } });
  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ timeout: WAIT });
  await open(session.id);
  const events = await subscribeEvents(oc.url, { headers: oc.authHeaders });
  // A slow stream: four chunks, four seconds apart.
  ms.script([{ text: 'Part one of a long answer. Part two. Part three. Part four.', chunkDelayMs: 4000 }]);
  await send(session.id, 'Write slowly');
  const reply = page.locator(`${chat(session.id)} [data-testid="message-assistant"]`).last();
  await reply.filter({ hasText: 'Part' }).waitFor({ timeout: WAIT });
  await page.locator(`${chat(session.id)} [data-testid="abort"]`).click();
  await events.waitForIdle(session.id, { timeoutMs: WAIT });
  events.close();

  // What the server says about it: the assistant message ends with MessageAbortedError.
  const messages = await oc.json(`/session/${session.id}/message`);
  const last = messages[messages.length - 1].info;
  assert.equal(last.error?.name, 'MessageAbortedError');

  await reply.locator('[data-testid="assistant-stopped"]').waitFor({ timeout: WAIT });
  assert.match(await reply.locator('[data-testid="assistant-stopped"]').innerText(), /Stopped/);
  assert.equal(await page.locator(`${chat(session.id)} [data-testid="assistant-error"]`).count(), 0, 'no red error');
  assert.equal(await page.locator(`${chat(session.id)} [data-testid="session-error"]`).count(), 0);
  assert.deepEqual((await toasts()).filter((t) => t.level === 'error'), [], 'no error toast');
});

test('repeated failures collapse into one toast with a count', async () => {
  const session = await oc.json('/session', { method: 'POST', body: { title: 'Stale pick' } });
  // A remembered model pick the server does not have: every prompt fails up front.
  await page.evaluate((id) => localStorage.setItem(`crosscheck.choice.${id}`, JSON.stringify({ model: { providerID: 'fake', modelID: 'nope' } })), session.id);
  await page.reload();
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ timeout: WAIT });
  await open(session.id);
  const errorToasts = page.locator('[data-testid="toast"][data-level="error"]');
  for (let i = 1; i <= 3; i++) {
    await send(session.id, `attempt ${i}`);
    await page.locator(`[data-testid="toast"][data-level="error"][data-count="${i}"]`).waitFor({ timeout: WAIT });
  }
  assert.equal(await errorToasts.count(), 1, 'one toast for three failures');
  const toast = errorToasts.first();
  assert.match(await toast.locator('[data-testid="toast-count"]').innerText(), /×3/);
  const sentence = await toast.locator('[data-testid="toast-text"]').innerText();
  assert.match(sentence, /the reply failed; the session shows why/);
  assert.doesNotMatch(sentence, /https?:|Error:/, 'no raw error chain or URL in the sentence');
  const detail = toast.locator('[data-testid="toast-detail"]');
  assert.equal(await detail.isVisible(), false, 'details stay behind the toggle');
  await toast.locator('[data-testid="toast-details"]').click();
  assert.match(await detail.innerText(), /Model not found: fake\/nope/);
  // It expires like the others once the pointer and the details let go of it.
  await toast.locator('[data-testid="toast-details"]').click();
  await page.mouse.move(600, 300);
  await page.evaluate(() => document.activeElement instanceof HTMLElement && document.activeElement.blur());
  await errorToasts.first().waitFor({ state: 'detached', timeout: 20_000 });
  await page.evaluate((id) => localStorage.removeItem(`crosscheck.choice.${id}`), session.id);
});

test('a server that is gone turns the pill red with the reason and a countdown; a prompt typed meanwhile is sent after the reconnect', async () => {
  const session = await oc.json('/session', { method: 'POST', body: { title: 'Offline typing' } });
  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ timeout: WAIT });
  await open(session.id);

  await oc.stop();
  const pill = page.locator('[data-testid="server-status"][data-state="reconnecting"]');
  await pill.waitFor({ timeout: WAIT });
  await page.locator('[data-testid="server-status"][data-reason="unreachable"]').waitFor({ timeout: WAIT });
  const label = await page.locator('[data-testid="server-status-label"]').innerText();
  assert.match(label, /^Server not reachable · (retrying in \d+ s|retrying now…)$/, label);
  const colour = await pill.evaluate((el) => getComputedStyle(el).color);
  const danger = await page.evaluate(() => {
    const probe = document.createElement('span');
    probe.style.color = 'var(--danger)';
    document.body.append(probe);
    const c = getComputedStyle(probe).color;
    probe.remove();
    return c;
  });
  assert.equal(colour, danger, 'the pill is red');
  // The countdown moves.
  const seconds = async () => Number((await page.locator('[data-testid="server-status-label"]').innerText()).match(/in (\d+) s/)?.[1] ?? 0);
  await until(async () => (await seconds()) >= 2, 'a countdown of a few seconds');
  const first = await seconds();
  await until(async () => (await seconds()) < first, 'the countdown to go down', 5_000);

  // The composer says what will happen, and keeps the prompt.
  const composer = `${chat(session.id)} [data-testid="composer-input"]`;
  assert.match(await page.getAttribute(composer, 'placeholder'), /once the server is back/);
  const prompt = 'Typed while the server was gone';
  await send(session.id, prompt);
  await page.locator(`${chat(session.id)} [data-testid="composer-queued"]`, { hasText: prompt }).waitFor({ timeout: WAIT });
  assert.match(await page.locator(`${chat(session.id)} [data-testid="composer-offline"]`).innerText(), /1 waiting; sent once the server is back/);
  assert.equal(ms.chatRequests().filter((r) => r.lastUserText === prompt).length, 0);

  await oc.restart();
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ timeout: WAIT });
  await page
    .locator(`${chat(session.id)} [data-testid="message-assistant"]`, { hasText: expectedReply(prompt) })
    .waitFor({ timeout: WAIT });
  assert.equal(ms.chatRequests().filter((r) => r.lastUserText === prompt).length, 1, 'sent exactly once');
  assert.equal(await page.locator(`${chat(session.id)} [data-testid="composer-queued"]`).count(), 0);
  assert.equal(await page.locator(`${chat(session.id)} [data-testid="message-user"]`, { hasText: prompt }).count(), 1);
  assert.deepEqual(pageErrors, []);
});
