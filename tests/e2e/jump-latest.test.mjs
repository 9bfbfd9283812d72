// "Jump to latest" never covers the newest row, in Chromium against the real `opencode serve`:
// while any part of the newest reply is on screen (its action row at its bottom: copy, transfer,
// Send selected findings, the sent mark) the button is hidden; scrolled further up it shows,
// and takes the view back to the bottom.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { screenshot, twoFrames } from '../support/browser.mjs';
import { until } from '../support/page.mjs';
import { startStack } from '../support/stack.mjs';

const PASSWORD = 'e2e-secret';
const UI_TIMEOUT = 20_000;
const TURNS = 6;

let stack;
let ms;
let oc;
let cc;
let browser;
let page;
let session;

const reply = (i) =>
  [`Reply ${i}: here is what changed.`, ...Array.from({ length: 6 }, (_, k) => `- Point ${k + 1} of reply ${i}, explained in a sentence long enough to wrap once or twice in the chat.`)].join('\n');

before(async () => {
  stack = await startStack({
    password: PASSWORD,
    viewport: { width: 1100, height: 700 },
    before: async ({ ms, oc }) => {
      session = await oc.json('/session', { method: 'POST', body: { title: 'A long talk' } });
      for (let i = 1; i <= TURNS; i++) {
        ms.script([{ text: reply(i) }]);
        await oc.json(`/session/${session.id}/message`, { method: 'POST', body: { parts: [{ type: 'text', text: `Prompt ${i}` }] } });
      }
    },
  });
  ({ ms, oc, cc, browser, page } = stack);
  await page.goto(cc.url);
});

after(() => stack?.stop());

/** The chat's scroller, scrolled by `dy` (negative: up) as a wheel would. */
async function scrollBy(dy) {
  await page.locator('[data-testid="chat"] [role="log"]').evaluate((el, d) => {
    el.scrollTop += d;
    el.dispatchEvent(new Event('scroll'));
  }, dy);
  await twoFrames(page);
}

const intersects = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

test('the button hides while the newest reply is in view and never covers its actions', async () => {
  await page.locator(`[data-testid="session-item"][data-session-id="${session.id}"]`).click();
  const newest = page.locator('[data-testid="message-assistant"]').filter({ hasText: `Reply ${TURNS}:` });
  await newest.waitFor({ timeout: UI_TIMEOUT });
  const jump = page.locator('[data-testid="jump-to-latest"]');

  // Up a little: the newest reply (and its action row) is still on screen.
  await scrollBy(-90);
  await twoFrames(page);
  const actions = newest.locator('[role="toolbar"]');
  assert.ok(await actions.isVisible(), 'the newest action row is on screen');
  assert.equal(await jump.count(), 0, 'Jump to latest is hidden while the newest reply is in view');

  // Well up, past the newest reply: the button shows, over older rows only.
  const log = page.locator('[data-testid="chat"] [role="log"]');
  const viewport = await log.evaluate((el) => el.clientHeight);
  await scrollBy(-(viewport + 400));
  await jump.waitFor({ timeout: UI_TIMEOUT });
  const button = await jump.boundingBox();
  const newestBox = await newest.boundingBox();
  assert.ok(!newestBox || !intersects(button, newestBox) || newestBox.y > (await log.boundingBox()).y + viewport,
    'the button does not sit over the newest reply');
  await screenshot(page, 'jump-to-latest-shown');

  await jump.click();
  await until(async () => (await jump.count()) === 0 && (await actions.isVisible()), 'the view back at the bottom', UI_TIMEOUT);
});
