// The pair view and the calm sidebar (issue 23 items 4 and 5), end to end in headless Chromium
// against real OpenCode and the scripted model server: the side panel follows a click in the
// sidebar, rows hold still under the pointer while a busy session finishes, each review sits
// under its implementer, and Ctrl+K finds a line inside a transcript not loaded yet while naming
// the session whose transcript the server failed to send (through a proxy that fails that read);
// the keyboard walks a long list, and the selected row, built again as the list scrolls past it,
// leaves the list where the person put it.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { launchBrowser, screenshot } from '../support/browser.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { subscribeEvents } from '../support/events.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';
import { newRecordedPage, sleep, until as untilCondition } from '../support/page.mjs';

const PASSWORD = 'e2e-secret';
const WAIT = 60_000;

let ms;
let oc;
let proxy;
let cc;
let browser;
let page;
let pageErrors = [];
let events;
/** Session ids whose `GET /session/:id/message` the proxy answers 500. */
const failReads = new Set();

/** A pass-through proxy to OpenCode (the event stream too) that fails the reads it is told to. */
function startProxy(target) {
  const up = new URL(target);
  const server = http.createServer((req, res) => {
    const m = /^\/session\/([^/?]+)\/message(?:\?|$)/.exec(req.url ?? '');
    if (req.method === 'GET' && m && failReads.has(decodeURIComponent(m[1]))) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ name: 'UnknownError', data: { message: 'storage read failed' } }));
      req.resume();
      return;
    }
    const out = http.request(
      { host: up.hostname, port: up.port, path: req.url, method: req.method, headers: { ...req.headers, host: up.host } },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}` })));
}

before(async () => {
  ms = await startModelServer();
  oc = await startOpencode({ modelUrl: ms.url, password: PASSWORD });
  proxy = await startProxy(oc.url);
  cc = await startCrosscheck({ opencodeUrl: proxy.url, password: PASSWORD });
  browser = await launchBrowser({ viewport: { width: 1400, height: 860 } });
  ({ page, pageErrors } = await newRecordedPage(browser));
  events = await subscribeEvents(oc.url, { headers: oc.authHeaders });
});

after(async () => {
  events?.close?.();
  await browser?.close();
  await cc?.stop();
  await new Promise((r) => (proxy ? proxy.server.close(() => r()) : r()));
  proxy?.server.closeAllConnections?.();
  await oc?.dispose();
  await ms?.close();
});

const until = (probe, what, timeoutMs = WAIT) => untilCondition(probe, what, timeoutMs);
const sel = {
  item: (id) => `[data-testid="session-item"][data-session-id="${id}"]`,
  panelChat: (id) => `[data-testid="context-panel"] [data-testid="chat"][data-session-id="${id}"]`,
  mainChat: (id) => `main [data-testid="chat"][data-session-id="${id}"]`,
};

/** Sends a prompt through OpenCode's API and waits for the turn to end. */
async function prompt(id, text) {
  const idle = events.waitForIdle(id);
  await oc.fetch(`/session/${id}/prompt_async`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ parts: [{ type: 'text', text }] }),
  });
  await idle;
}

async function session(title, metadata) {
  return oc.json('/session', { method: 'POST', body: { title, ...(metadata ? { metadata } : {}) } });
}

/** A linked pair made through OpenCode's API. */
async function linkedPair(title) {
  const original = await session(title);
  const review = await session(`Review: ${title}`, { openchamber: { kind: 'review', originalSessionID: original.id } });
  await oc.json(`/session/${original.id}`, { method: 'PATCH', body: { metadata: { openchamber: { reviewSessionID: review.id } } } });
  return { original, review };
}

/** Sidebar row ids in screen order, with the indent of each. */
const rows = () =>
  page.$$eval('[data-testid="session-item"]', (els) => els.map((e) => `${e.dataset.depth === '1' ? '>' : ''}${e.dataset.sessionId}`));

let pairs;
let solo;
let quiet;

test('the pair view follows a click in the sidebar, and tabs do not pile up', { timeout: 5 * 60_000 }, async () => {
  pairs = [];
  for (const name of ['Parser', 'Lexer', 'Printer']) pairs.push(await linkedPair(name));
  solo = await session('Solo notes');
  quiet = await session('Quiet session');
  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
  await page.locator(sel.item(pairs[2].review.id)).waitFor({ state: 'attached', timeout: WAIT });

  const [a, b, c] = pairs;
  await page.locator(`${sel.item(a.original.id)} .main`).click();
  await page.locator(sel.mainChat(a.original.id)).waitFor({ state: 'visible', timeout: WAIT });
  await page.locator(sel.panelChat(a.review.id)).waitFor({ state: 'visible', timeout: WAIT });
  const follow = page.locator('[data-testid="context-tab"][data-follows="true"]');
  assert.equal(await follow.getAttribute('data-key'), `session:${a.review.id}`);

  // From the reviewer's side the panel shows its implementer.
  await page.locator(`${sel.item(b.review.id)} .main`).click();
  await page.locator(sel.mainChat(b.review.id)).waitFor({ state: 'visible', timeout: WAIT });
  await page.locator(sel.panelChat(b.original.id)).waitFor({ state: 'visible', timeout: WAIT });

  // Five sessions visited: one follow tab, no session open twice.
  for (const id of [solo.id, c.original.id, a.review.id, quiet.id, c.review.id]) {
    await page.locator(`${sel.item(id)} .main`).click();
    await page.locator(sel.mainChat(id)).waitFor({ state: 'visible', timeout: WAIT });
  }
  await page.locator(sel.panelChat(c.original.id)).waitFor({ state: 'visible', timeout: WAIT });
  const keys = await page.$$eval('[data-testid="context-tab"]', (els) => els.map((e) => e.dataset.key));
  assert.deepEqual(keys, [`session:${c.original.id}`], 'one follow tab, nothing piled up');
  const shown = await page.$$eval('[data-testid="chat"]', (els) => els.map((e) => e.dataset.sessionId));
  assert.equal(new Set(shown).size, shown.length, `no session open twice: ${shown}`);
  assert.deepEqual(pageErrors, []);
});

test('each review sits under its implementer, indented', { timeout: 60_000 }, async () => {
  const order = await rows();
  for (const { original, review } of pairs) {
    const i = order.indexOf(original.id);
    assert.ok(i >= 0, `${original.id} listed`);
    assert.equal(order[i + 1], `>${review.id}`, `review under its implementer: ${order}`);
  }
  await sleep(1000);
  await screenshot(page, 'sidebar-pairs');
});

test('rows do not move under the pointer while a busy session finishes, and settle when it leaves', { timeout: 3 * 60_000 }, async () => {
  // The oldest pair is at the bottom; its implementer's turn will finish while the pointer is over the list.
  const late = pairs[0].original;
  await page.locator(`${sel.item(solo.id)} .main`).click();
  const before = await rows();
  assert.notEqual(before[0], late.id, 'the oldest pair is not first yet');
  // The pointer comes over the list: the order is held.
  await page.locator(`${sel.item(quiet.id)} .main`).hover();
  await page.locator('[data-testid="session-list"][data-held="true"]').waitFor({ state: 'attached', timeout: WAIT });

  ms.script([{ text: 'Done: the parser turn finished.\nAll checks pass.', delayMs: 1500 }]);
  const busy = page.locator(`${sel.item(late.id)} [data-testid="session-status"][data-status="busy"]`);
  const turn = prompt(late.id, 'Finish the parser turn');
  await busy.waitFor({ state: 'visible', timeout: WAIT });
  assert.deepEqual(await rows(), before, 'no row moved when it turned busy');
  await turn;
  await busy.waitFor({ state: 'detached', timeout: WAIT });
  await sleep(300);
  assert.deepEqual(await rows(), before, 'no row moved when it finished');
  await page.locator(`${sel.item(late.id)}[data-moved="true"] [data-testid="activity-mark"]`).waitFor({ state: 'visible', timeout: WAIT });
  await screenshot(page, 'sidebar-calm-held');

  // The pointer leaves: the order settles, the finished pair first, its review still under it.
  await page.mouse.move(900, 400);
  await until(async () => (await rows())[0] === late.id, 'the finished session to move up');
  assert.equal((await rows())[1], `>${pairs[0].review.id}`);
  assert.equal(await page.locator(`${sel.item(late.id)}[data-moved="true"]`).count(), 0, 'the mark goes');
});

test('Ctrl+K finds a line in a transcript not loaded yet and names the session it could not read', { timeout: 3 * 60_000 }, async () => {
  // A transcript only the server holds (never opened here), and one whose read fails.
  const far = await session('Unopened work');
  ms.script([{ text: 'Looked into it.\nThe zebra crossing fails on empty input.' }]);
  await prompt(far.id, 'Check the crossing');
  const broken = await session('Unreadable work');
  ms.script([{ text: 'zebra notes here' }]);
  await prompt(broken.id, 'Write notes');
  await page.locator(sel.item(broken.id)).waitFor({ state: 'attached', timeout: WAIT });
  failReads.add(broken.id);

  await page.keyboard.press('Control+k');
  await page.keyboard.type('zebra crossing');
  const hit = page.locator(`${sel.item(far.id)} [data-testid="search-hit"]`);
  await hit.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal((await hit.textContent()).trim(), 'The zebra crossing fails on empty input.');
  await page.locator('[data-testid="search-progress"][data-done="true"]').waitFor({ state: 'visible', timeout: WAIT });
  const unread = page.locator('[data-testid="search-unread"]');
  await unread.waitFor({ state: 'visible', timeout: WAIT });
  assert.match(await unread.textContent(), /Unreadable work/);
  // The title does not match: the row is there for its transcript.
  assert.equal(await page.locator(sel.item(quiet.id)).count(), 0, 'sessions matching nothing are filtered out');
  await screenshot(page, 'sidebar-transcript-search');
  assert.deepEqual(pageErrors, []);
});

test('a review loop that ends clean shows its chip on the pair, and the handoff opens the review as the follow tab', { timeout: 4 * 60_000 }, async () => {
  // Clear the search of the test before.
  await page.locator('[data-testid="session-search"]').fill('');
  const original = await session('Greeter');
  ms.script([
    { text: 'HANDOFF: greet() now takes a name; tests added.' },
    { text: 'Checked the change and its tests.\n\nFINDINGS\nREVIEWED src/greet.ts\nVERDICT: CLEAN' },
  ]);
  await page.locator(`${sel.item(original.id)} .main`).click({ timeout: WAIT });
  const input = page.locator(`${sel.mainChat(original.id)} [data-testid="composer-input"]`);
  await input.waitFor({ state: 'visible', timeout: WAIT });
  await input.click();
  await input.fill('/handoff-review');
  const menu = page.locator(`${sel.mainChat(original.id)} [data-testid="command-menu"]`);
  await menu.waitFor({ state: 'visible', timeout: WAIT });
  await menu.locator('[data-testid="command-item"][data-name="handoff-review"]').click({ timeout: WAIT });
  await until(async () => (await input.inputValue()).trim() === '/handoff-review', 'the picked command');
  await input.press('Enter');
  const dialog = page.locator('[data-testid="handoff-dialog"]');
  await dialog.waitFor({ state: 'visible', timeout: WAIT });
  await dialog.getByLabel('Automatic review loop').check();
  await dialog.locator('[data-testid="handoff-start"]').click({ timeout: WAIT });
  await dialog.waitFor({ state: 'detached', timeout: WAIT });

  const chip = page.locator(`${sel.item(original.id)} [data-testid="loop-chip"]`);
  await chip.waitFor({ state: 'visible', timeout: 2 * WAIT });
  assert.equal(await chip.getAttribute('data-reason'), 'clean');
  const order = await rows();
  const i = order.indexOf(original.id);
  const reviewId = order[i + 1]?.slice(1);
  assert.ok(order[i + 1]?.startsWith('>'), `the new review sits under its implementer: ${order}`);
  // The handoff's review opened as the follow tab, not as one more pinned tab.
  const follow = page.locator('[data-testid="context-tab"][data-follows="true"]');
  await until(async () => (await follow.getAttribute('data-key').catch(() => null)) === `session:${reviewId}`, 'the review as the follow tab');
  await page.mouse.move(900, 400);
  await sleep(500);
  await screenshot(page, 'sidebar-pairs-chips');
  assert.deepEqual(pageErrors, []);
});

test('the arrow keys, Home and End walk every row of a long list, the ones out of view included', { timeout: 3 * 60_000 }, async () => {
  for (let i = 0; i < 80; i += 10) {
    await Promise.all(Array.from({ length: 10 }, (_, k) => session(`Walked ${String(i + k).padStart(2, '0')}`)));
  }
  await until(async () => (await cc.api({ cmd: 'snapshot' })).sessions.filter((s) => s.title.startsWith('Walked')).length === 80, 'the 80 sessions listed');
  // The earlier tests' turns and flows are over first: a turn ending during the walk re-sorts the
  // rows and adds a Needs you item above them (this test walks a list that holds still).
  await until(async () => {
    const snap = await cc.api({ cmd: 'snapshot' });
    return Object.keys(snap.statuses).length === 0 && snap.flows.every((f) => f.ended);
  }, 'no turn or flow running');
  // The session selected before stays selected: the list opens scrolled to it, far below the
  // 80 new ones.
  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ state: 'attached', timeout: WAIT });
  await page.locator('[data-testid="session-list"] [data-testid="session-item"]').first().waitFor({ timeout: WAIT });
  const focused = () => page.evaluate(() => {
    const row = document.activeElement?.closest('[data-testid="session-item"]');
    if (!row) return null;
    const list = document.querySelector('[data-testid="session-list"]').getBoundingClientRect();
    const box = row.getBoundingClientRect();
    const rows = [...document.querySelectorAll('[data-testid="session-list"] [data-testid="session-item"]')];
    return { id: row.dataset.sessionId, index: rows.indexOf(row), last: rows.length - 1, inView: box.top >= list.top - 1 && box.bottom <= list.bottom + 1 };
  });
  /** Where the list and the focused row are, for a failure's message. */
  const geometry = () => page.evaluate(() => {
    const list = document.querySelector('[data-testid="session-list"]');
    const row = document.activeElement?.closest('[data-testid="session-item"]');
    const r = (el) => { const b = el?.getBoundingClientRect(); return b ? [Math.round(b.top), Math.round(b.bottom)] : null; };
    const items = document.querySelectorAll('[data-testid="needs-you-item"]').length;
    return JSON.stringify({ list: r(list), row: r(row), top: list.scrollTop, height: list.scrollHeight, client: list.clientHeight, needsYou: items });
  });
  /** Waits until the focused row is in view and `is` it; a failure says where it is instead. */
  const untilFocusedInView = (is, what) =>
    until(async () => {
      const now = await focused();
      return now && now.inView && is(now);
    }, what).catch(async (err) => {
      err.message += `: focused ${JSON.stringify(await focused())}, active ${await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 120))}, ${await geometry()}`;
      throw err;
    });
  // From the search box, Down enters the list at its first row (the newest session).
  await page.locator('[data-testid="session-search"]').focus();
  await page.keyboard.press('ArrowDown');
  await until(async () => (await focused())?.inView, 'a row focused from the search box');
  const first = await focused();
  assert.equal(first.index, 0, JSON.stringify(first));
  const top = (await cc.api({ cmd: 'snapshot' })).sessions.find((s) => s.id === first.id);
  assert.match(top?.title ?? '', /^Walked 7\d$/, 'one of the last ten made');
  const built = await page.locator('[data-testid="session-list"] [data-testid="session-item"]').count();
  await page.keyboard.press('End');
  await untilFocusedInView((now) => now.index === now.last, 'the last row focused, in view');
  const last = await focused();
  assert.notEqual(last.id, first.id);
  // The row above, by session: the built rows (and so the indexes) may change as the list
  // scrolls.
  const above = await page.evaluate((index) => document.querySelectorAll('[data-testid="session-list"] [data-testid="session-item"]')[index - 1]?.dataset.sessionId, last.index);
  await page.keyboard.press('ArrowUp');
  await untilFocusedInView((now) => now.id === above, `the row above the last focused (${above})`);
  await screenshot(page, 'sidebar-keyboard');
  await page.keyboard.press('Home');
  await until(async () => (await focused())?.id === first.id, 'the first row focused again');
  // An item joining Needs you above the list makes it shorter: the focused row at its bottom
  // stays in view.
  await page.keyboard.press('End');
  await untilFocusedInView((now) => now.id === last.id, 'the last row focused again, in view');
  const itemsBefore = await page.locator('[data-testid="needs-you-item"]').count();
  ms.script([{ text: 'A turn that finished while the list was walked.' }]);
  await prompt(first.id, 'Finish a turn.');
  await until(async () => (await page.locator('[data-testid="needs-you-item"]').count()) > itemsBefore, 'the finished turn in Needs you');
  await untilFocusedInView((now) => now.id === last.id, 'the focused row in view after the list got shorter');
  assert.ok(built < 80, `only the rows in view are built (${built})`);
  assert.deepEqual(pageErrors, []);
});

test('the selected row does not pull the list back to itself when the list builds it again', { timeout: 2 * 60_000 }, async () => {
  const list = page.locator('[data-testid="session-list"]');
  const selected = '[data-testid="session-list"] [data-testid="session-item"]:has(.main[aria-current="true"])';
  // Select the last row (End, then Enter), far below the first screen.
  await page.locator('[data-testid="session-search"]').focus();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('End');
  await until(async () => (await page.evaluate(() => {
    const rows = [...document.querySelectorAll('[data-testid="session-list"] [data-testid="session-item"]')];
    return rows.length > 0 && document.activeElement?.closest('[data-testid="session-item"]') === rows[rows.length - 1];
  })), 'the last row focused');
  await page.keyboard.press('Enter');
  await page.locator(selected).waitFor({ state: 'visible', timeout: WAIT });
  const id = await page.locator(selected).getAttribute('data-session-id');
  /** Where the selected row sits in the list's content (px from its top). */
  const at = await page.evaluate((s) => {
    const el = document.querySelector('[data-testid="session-list"]');
    return document.querySelector(s).getBoundingClientRect().top - el.getBoundingClientRect().top + el.scrollTop;
  }, selected);
  // Scrolled away to the top, its row is no longer built.
  await list.evaluate((el) => (el.scrollTop = 0));
  await until(async () => (await page.locator(sel.item(id)).count()) === 0, 'the selected row left out at the top');
  // Scrolled back to just above it: its row is built again below the view (the overscan), and
  // the list stays where the person put it.
  const want = await list.evaluate((el, row) => (el.scrollTop = Math.round(row - el.clientHeight - 60)), at);
  assert.ok(want > 0, `the list is long enough to scroll above the row (${want})`);
  await until(async () => (await page.locator(sel.item(id)).count()) === 1, 'the selected row built again');
  await page.evaluate(() => new Promise((done) => {
    let n = 0;
    const next = () => (++n >= 10 ? done() : requestAnimationFrame(next));
    requestAnimationFrame(next);
  }));
  const now = await list.evaluate((el) => el.scrollTop);
  assert.ok(Math.abs(now - want) <= 1, `the list stayed at ${want} px, not pulled to the selected row (now ${now})`);
  assert.deepEqual(pageErrors, []);
});

/** From the next load on, the page stands for the desktop window's engine (WebKit), which keeps
 * no scroll anchor: `CSS.supports` says so to the app (which then keeps its own), and each test
 * turns Chromium's anchoring off in the list. */
async function asAnEngineWithoutScrollAnchoring() {
  await page.addInitScript(() => {
    const supports = CSS.supports.bind(CSS);
    CSS.supports = (...args) => (String(args[0]).trim().startsWith('overflow-anchor') ? false : supports(...args));
  });
}

test('a row built above the view taller than guessed does not move the rows in view, in an engine without scroll anchoring', { timeout: 2 * 60_000 }, async () => {
  await asAnEngineWithoutScrollAnchoring();
  // The page opens at the selected session, the last row: the middle of the list is not built.
  await page.goto(cc.url);
  await page.locator('[data-testid="session-list"] [data-testid="session-item"]').first().waitFor({ timeout: WAIT });
  const list = page.locator('[data-testid="session-list"]');
  await list.evaluate((el) => (el.style.overflowAnchor = 'none'));
  assert.equal(await page.evaluate(() => CSS.supports('overflow-anchor', 'auto')), false, 'the page stands for WebKit');
  // A session whose row this page has not built, made 40 px taller than the rows around it.
  const tall = (await cc.api({ cmd: 'snapshot' })).sessions.find((s) => s.title === 'Walked 35');
  assert.ok(tall, 'the session made by the arrow-key test');
  assert.equal(await page.locator(sel.item(tall.id)).count(), 0, 'its row not built yet');
  await page.addStyleTag({ content: `[data-session-id="${tall.id}"] { padding-bottom: 40px; }` });
  const frames = (n) => page.evaluate((count) => new Promise((done) => {
    let i = 0;
    const next = () => (++i >= count ? done() : requestAnimationFrame(next));
    requestAnimationFrame(next);
  }), n);
  /** The first row wholly in view, and its top. */
  const firstInView = () => list.evaluate((el) => {
    const edge = el.getBoundingClientRect().top;
    const row = [...el.querySelectorAll('[data-testid="session-item"]')].find((r) => r.getBoundingClientRect().top >= edge);
    return row ? { id: row.dataset.sessionId, top: row.getBoundingClientRect().top } : null;
  });
  // Scrolled up 100 px at a time (a wheel), until the taller row is built and three steps after.
  let builtAt = -1;
  for (let step = 0; builtAt < 0 ? step < 60 : step < builtAt + 3; step++) {
    const before = await firstInView();
    assert.ok(before, `step ${step}: a row in view`);
    await list.evaluate((el) => (el.scrollTop -= 100));
    await frames(4);
    const top = await list.evaluate((el, id) => el.querySelector(`[data-session-id="${id}"]`)?.getBoundingClientRect().top ?? null, before.id);
    assert.ok(top !== null && Math.abs(top - (before.top + 100)) <= 1, `step ${step}: the row at the top of the view moved ${top === null ? 'out' : top - before.top} px for a scroll of 100 px`);
    if (builtAt < 0 && (await page.locator(sel.item(tall.id)).count()) === 1) builtAt = step;
  }
  assert.ok(builtAt >= 0, 'the taller row was built as the list scrolled up');
  const height = await page.locator(sel.item(tall.id)).evaluate((el) => el.getBoundingClientRect().height);
  assert.ok(height >= 80, `the row built is taller than the rows around it (${height} px)`);
  assert.deepEqual(pageErrors, []);
});

test('a session made above the view does not move the rows in view, in an engine without scroll anchoring', { timeout: 2 * 60_000 }, async () => {
  await page.goto(cc.url);
  await page.locator('[data-testid="session-list"] [data-testid="session-item"]').first().waitFor({ timeout: WAIT });
  const list = page.locator('[data-testid="session-list"]');
  // As in the desktop window (see asAnEngineWithoutScrollAnchoring, still in force); the pointer
  // away from the sidebar, so the list is not held and the new session sorts in at the top.
  await list.evaluate((el) => (el.style.overflowAnchor = 'none'));
  assert.equal(await page.evaluate(() => CSS.supports('overflow-anchor', 'auto')), false, 'the page stands for WebKit');
  await page.mouse.move(1300, 500);
  await list.evaluate((el) => (el.scrollTop = 1500));
  /** Sessions in the first group, where a new one of this folder goes. */
  const count = async () => Number(await page.locator('[data-testid="session-group"] .count').first().textContent());
  const before = await count();
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  const firstInView = () => list.evaluate((el) => {
    const edge = el.getBoundingClientRect().top;
    const row = [...el.querySelectorAll('[data-testid="session-item"]')].find((r) => r.getBoundingClientRect().top >= edge);
    return row ? { id: row.dataset.sessionId, top: row.getBoundingClientRect().top } : null;
  });
  const held = await firstInView();
  assert.ok(held, 'a row in view');
  // Else the calm order would put the new session after the others and nothing would move.
  assert.equal(await list.getAttribute('data-held'), 'false', 'the order is not held');
  const made = await session('Made while the list was scrolled');
  await until(async () => (await count()) === before + 1, 'the new session listed');
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  assert.equal(await page.locator(sel.item(made.id)).count(), 0, 'the new session sorts in above the view');
  const top = await list.evaluate((el, id) => el.querySelector(`[data-session-id="${id}"]`)?.getBoundingClientRect().top ?? null, held.id);
  assert.ok(top !== null && Math.abs(top - held.top) <= 1, `the row at the top of the view stayed (moved ${top === null ? 'out' : top - held.top} px)`);
  assert.deepEqual(pageErrors, []);
});
