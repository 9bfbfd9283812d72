// The window fits, against the real `opencode serve` with a real transcript: at 1600, 1280 and
// 900 px nothing runs off-screen (every element's and every text line's box, clipped by the
// scroll containers it sits in, is inside the viewport) with the side panel open, long titles,
// long code lines, a dialog and a toast; the side panel is a clamped fraction of the window,
// resizable by drag and keyboard, and floats over the chat (closable with Escape) below 1000 px.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launchBrowser, screenshot, twoFrames } from '../support/browser.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { subscribeEvents } from '../support/events.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';
import { newRecordedPage } from '../support/page.mjs';

const PASSWORD = 'e2e-secret';
const WAIT = 60_000;
const LONG_TITLE = 'Refactor the payment reconciliation pipeline so that nightly settlement reports match the ledger to the cent, including refunds';
const LONG_LINE = `const settlement = reconcile(${Array.from({ length: 24 }, (_, i) => `ledgerEntry${i}`).join(', ')}); // one very long line`;
const REPLY = [
  '## Plan',
  '',
  'I will change the reconciliation in three steps and keep the nightly job running meanwhile:',
  '',
  '1. Read the ledger rows for the day and group them by merchant.',
  '2. Match each settlement line against the group, refunds included.',
  '3. Write the differences to `reports/settlement-diff.csv`.',
  '',
  '```ts',
  LONG_LINE,
  'export function reconcile(...rows: LedgerRow[]): Settlement {',
  '  return rows.reduce(addRow, emptySettlement());',
  '}',
  '```',
  '',
  `An unbroken token that must wrap: ${'x'.repeat(180)}`,
  '',
  '| file | change |',
  '| --- | --- |',
  '| src/reconcile.ts | group by merchant, match refunds |',
  '| src/report.ts | write the differences as CSV |',
].join('\n');

let ms;
let oc;
let cc;
let browser;
let page;
let pageErrors;
let main;
let side;

async function runTurn(session, text, reply) {
  const events = await subscribeEvents(oc.url, { headers: oc.authHeaders });
  ms.script([{ text: reply }]);
  await oc.fetch(`/session/${session.id}/prompt_async`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ parts: [{ type: 'text', text }] }),
  });
  await events.waitForIdle(session.id, { timeoutMs: WAIT });
  events.close();
}

before(async () => {
  ms = await startModelServer();
  oc = await startOpencode({ modelUrl: ms.url, password: PASSWORD });
  main = await oc.json('/session', { method: 'POST', body: { title: LONG_TITLE } });
  side = await oc.json('/session', { method: 'POST', body: { title: 'Review of the reconciliation plan' } });
  await runTurn(main, 'Plan the reconciliation change: which files, which steps, and how we know it works.', REPLY);
  await runTurn(main, 'Show the core function once more with the long call on one line.', `Here it is:\n\n\`\`\`ts\n${LONG_LINE}\n\`\`\``);
  await runTurn(side, 'Review the plan in the other session.', 'The plan names the files and the steps. It should also say how the CSV is checked.\n\nVERDICT: FLAGS (1)');
  cc = await startCrosscheck({ opencodeUrl: oc.url, password: PASSWORD });
  browser = await launchBrowser({ viewport: { width: 1600, height: 1000 } });
  ({ page, pageErrors } = await newRecordedPage(browser));
});

after(async () => {
  await browser?.close();
  await cc?.stop();
  await oc?.dispose();
  await ms?.close();
});

/** Every element and text line that sticks out of the viewport, after clipping by the scroll
 * containers around it (a scrolled-away row or a long code line inside its own scroller is
 * fine; the scroller itself must fit). */
function overflowing() {
  return page.evaluate(() => {
    const vw = document.documentElement.clientWidth;
    const vh = document.documentElement.clientHeight;
    // Clipped by the ancestors that clip (and, for a text line, by its own element too).
    const clipped = (el, rect, self = false) => {
      const box = { l: rect.left, t: rect.top, r: rect.right, b: rect.bottom };
      for (let p = el; p && p !== document.body && p !== document.documentElement; p = p.parentElement) {
        if (self || p !== el) {
          const cs = getComputedStyle(p);
          const pr = p.getBoundingClientRect();
          if (cs.overflowX !== 'visible') {
            box.l = Math.max(box.l, pr.left);
            box.r = Math.min(box.r, pr.right);
          }
          if (cs.overflowY !== 'visible') {
            box.t = Math.max(box.t, pr.top);
            box.b = Math.min(box.b, pr.bottom);
          }
        }
      }
      return box;
    };
    const name = (el) => {
      const id = el.getAttribute('data-testid');
      const cls = typeof el.className === 'string' ? el.className.split(/\s+/).filter((c) => !c.startsWith('svelte-'))[0] : '';
      return `${el.tagName.toLowerCase()}${id ? `[${id}]` : ''}${cls ? `.${cls}` : ''}`;
    };
    const out = (box) => box.r > box.l && box.b > box.t && (box.l < -1 || box.t < -1 || box.r > vw + 1 || box.b > vh + 1);
    const bad = [];
    for (const el of document.body.querySelectorAll('*')) {
      const cs = getComputedStyle(el);
      if (cs.display === 'none' || cs.visibility === 'hidden' || el.closest('.visually-hidden')) continue;
      const rect = el.getBoundingClientRect();
      if (rect.width === 0 || rect.height === 0) continue;
      const box = clipped(el, rect);
      if (out(box)) bad.push(`${name(el)} [${Math.round(box.l)},${Math.round(box.t)} → ${Math.round(box.r)},${Math.round(box.b)}]`);
    }
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!/\S/.test(node.textContent) || !node.parentElement || node.parentElement.closest('.visually-hidden')) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      for (const rect of range.getClientRects()) {
        if (rect.width === 0) continue;
        const box = clipped(node.parentElement, rect, true);
        box.l = Math.max(box.l, rect.left);
        if (out(box)) {
          bad.push(`text "${node.textContent.trim().slice(0, 40)}" in ${name(node.parentElement)} [${Math.round(box.l)} → ${Math.round(box.r)}]`);
          break;
        }
      }
    }
    if (document.documentElement.scrollWidth > vw + 1) bad.push(`page scrolls sideways (${document.documentElement.scrollWidth} > ${vw})`);
    return bad;
  });
}

/** The visible one-line fields whose placeholder does not fit their box (a cut hint reads
 * like a bug: "Search sessions (Ctrl+"). */
function cutPlaceholders() {
  return page.evaluate(() => {
    const ctx = document.createElement('canvas').getContext('2d');
    const bad = [];
    for (const el of document.querySelectorAll('input[placeholder]')) {
      const rect = el.getBoundingClientRect();
      if (rect.width === 0 || !el.placeholder) continue;
      const cs = getComputedStyle(el);
      ctx.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
      const room = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
      const need = ctx.measureText(el.placeholder).width;
      if (need > room + 0.5) bad.push(`"${el.placeholder}" needs ${Math.ceil(need)} px, has ${Math.floor(room)}`);
    }
    return bad;
  });
}

async function setWidth(width, height) {
  await page.setViewportSize({ width, height });
  await twoFrames(page);
  await twoFrames(page);
}

const panel = (p) => p.locator('[data-testid="context-panel"]');
const box = async (sel) => page.locator(sel).boundingBox();

test('set-up: a real transcript in the centre and a session in the side panel', async () => {
  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ timeout: WAIT });
  // The second session opens in the side panel, the first in the centre.
  await page.locator(`[data-testid="session-item"][data-session-id="${side.id}"]`).click({ timeout: WAIT });
  await page.locator(`[data-testid="chat"][data-session-id="${side.id}"] header .icon-btn`).click();
  await panel(page).locator(`[data-testid="chat"][data-session-id="${side.id}"] [data-testid="message-assistant"]`).first().waitFor({ timeout: WAIT });
  await page.locator(`[data-testid="session-item"][data-session-id="${main.id}"]`).click();
  await page.locator('main [data-testid="message-assistant"]', { hasText: 'one very long line' }).last().waitFor({ timeout: WAIT });
  await page.locator('main [data-testid="message-assistant"]', { hasText: 'Plan' }).first().waitFor({ timeout: WAIT });
});

for (const [width, height] of [[1600, 1000], [1280, 800], [900, 800]]) {
  test(`at ${width} px nothing runs off-screen, with the side panel open`, async () => {
    await setWidth(width, height);
    await panel(page).waitFor({ timeout: WAIT });
    const overlay = (await panel(page).getAttribute('data-overlay')) === 'true';
    assert.equal(overlay, width < 1000, 'the panel floats only below 1000 px');
    const p = await box('[data-testid="context-panel"]');
    const m = await box('main');
    assert.ok(p.width >= 320 - 1, `panel ${p.width} px`);
    if (!overlay) {
      assert.ok(m.width >= 400 - 1, `centre ${m.width} px`);
      assert.ok(Math.abs(p.width - Math.round(width * 0.36)) <= 2 || p.width <= width - 272 - 400 + 1, `panel is a share of the window: ${p.width}`);
    }
    assert.ok(p.x + p.width <= width + 1 && p.x >= -1);
    assert.deepEqual(await overflowing(), [], `overflow at ${width} px`);
    assert.deepEqual(await cutPlaceholders(), [], `cut placeholders at ${width} px`);
    await screenshot(page, `layout-${width}`);
  });
}

test('at 900 px the floating panel closes with Escape, and dialogs, the top bar, the composer and toasts fit', async () => {
  await setWidth(900, 800);
  // The floating panel covers part of the chat; the cursor is in the composer beneath it.
  await page.locator('main [data-testid="composer-input"]').focus();
  // The composer takes Escape only while a turn runs; here it closes the floating panel.
  await page.keyboard.press('Escape');
  await panel(page).waitFor({ state: 'detached', timeout: WAIT });
  await page.locator('[data-testid="toggle-panel"]').click();
  await panel(page).waitFor({ timeout: WAIT });
  await page.locator('[data-testid="panel-scrim"]').click({ position: { x: 20, y: 200 } });
  await panel(page).waitFor({ state: 'detached', timeout: WAIT });

  // A real error toast: a plan file that does not exist.
  const input = page.locator('main [data-testid="composer-input"]');
  await input.fill('/cold-review no-such-plan.md');
  await input.press('Enter');
  await page.locator('[data-testid="toast"][data-level="error"]').first().waitFor({ timeout: WAIT });
  assert.deepEqual(await overflowing(), [], 'overflow with a toast');

  for (const [open, dialog] of [
    ['[data-testid="new-session"]', '[data-testid="new-session-dialog"]'],
    ['[data-testid="open-settings"]', '[data-testid="settings"]'],
  ]) {
    await page.locator(open).click();
    await page.locator(dialog).waitFor({ timeout: WAIT });
    await twoFrames(page);
    assert.deepEqual(await overflowing(), [], `overflow with ${dialog}`);
    await page.keyboard.press('Escape');
    await page.locator(dialog).waitFor({ state: 'detached', timeout: WAIT });
  }
});

test('the splitter resizes by keyboard and drag, within the limits, and the width follows the window', async () => {
  await setWidth(1280, 800);
  if (!(await panel(page).count())) await page.locator('[data-testid="toggle-panel"]').click();
  const splitter = page.locator('[data-testid="panel-resize"]');
  await splitter.focus();
  const before = (await box('[data-testid="context-panel"]')).width;
  await page.keyboard.press('ArrowLeft');
  await twoFrames(page);
  assert.equal(Math.round((await box('[data-testid="context-panel"]')).width), Math.round(before + 20), 'ArrowLeft widens by 20 px');
  await page.keyboard.press('End');
  await twoFrames(page);
  const max = Number(await splitter.getAttribute('aria-valuemax'));
  assert.equal(Math.round((await box('[data-testid="context-panel"]')).width), max);
  assert.ok((await box('main')).width >= 400 - 1, 'the centre keeps its minimum');
  await page.keyboard.press('Home');
  await twoFrames(page);
  assert.equal(Math.round((await box('[data-testid="context-panel"]')).width), 320, 'Home: the narrowest');

  // Drag the edge 150 px to the left.
  const s = await splitter.boundingBox();
  await page.mouse.move(s.x + s.width / 2, s.y + 200);
  await page.mouse.down();
  await page.mouse.move(s.x + s.width / 2 - 150, s.y + 200, { steps: 5 });
  await page.mouse.up();
  await twoFrames(page);
  const dragged = (await box('[data-testid="context-panel"]')).width;
  assert.ok(Math.abs(dragged - 470) <= 2, `dragged to ${dragged}`);

  // The width is a share of the window: a wider window, a wider panel.
  await setWidth(1600, 1000);
  const wider = (await box('[data-testid="context-panel"]')).width;
  assert.ok(Math.abs(wider - (dragged * 1600) / 1280) <= 3, `${dragged} at 1280 → ${wider} at 1600`);
  assert.deepEqual(await overflowing(), []);
  assert.deepEqual(pageErrors, []);
});
