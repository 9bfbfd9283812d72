// The sidebar holds still in the desktop window: WebKit keeps no scroll anchor, so a row built
// above the view at another height than the list guessed, or a session made above it, would push
// the rows in view down (a jump under the pointer). The list scrolls by as much itself. Runs the
// real window through tauri-driver under Xvfb, like smoke.test.mjs.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { desktopPrerequisites, startDesktop, waitForScript } from '../support/webdriver.mjs';

const PASSWORD = 'desktop-scroll-secret';
const TITLE = 'Scrolled in the window';
const MORE = 60;
const { missing, skip } = desktopPrerequisites();

let desktop;
let wd;
/** The one window of this file (a WebDriver session), opened by the first test that needs it. */
const openWindow = async () => (wd ??= await desktop.open());

before(async () => {
  if (skip) return;
  if (missing) throw new Error(`desktop sidebar scroll test cannot run: ${missing}`);
  desktop = await startDesktop({ title: TITLE, password: PASSWORD, prefix: 'crosscheck-desktop-scroll-' });
  for (let i = 0; i < MORE; i += 10) {
    await Promise.all(
      Array.from({ length: 10 }, (_, k) =>
        desktop.oc.json('/session', { method: 'POST', body: { title: `Listed ${String(i + k).padStart(2, '0')}` } }),
      ),
    );
  }
});

after(async () => {
  await desktop?.stop();
});

test('scrolling the sidebar up past a row taller than guessed moves the rows in view by the scroll alone', { skip }, async () => {
  const tall = (await desktop.oc.json('/session')).find((s) => s.title === 'Listed 25');
  assert.ok(tall, 'the session to make taller');
  await openWindow();
  await waitForScript(wd, `return document.querySelector('[data-testid="session-group"] .count')?.textContent === '${MORE + 1}'`, 'every session listed', 60_000);
  const result = JSON.parse(
    await wd.executeAsyncScript(
      `const done = arguments[arguments.length - 1];
       const tallId = arguments[0];
       const list = document.querySelector('[data-testid="session-list"]');
       const frames = (n) => new Promise((ok) => { let i = 0; const f = () => (++i >= n ? ok() : requestAnimationFrame(f)); requestAnimationFrame(f); });
       const built = () => !!list.querySelector('[data-session-id="' + tallId + '"]');
       (async () => {
         list.scrollTop = list.scrollHeight;
         await frames(6);
         const builtAtStart = built();
         // A row this window has not built, 40 px taller than the rows around it.
         const style = document.createElement('style');
         style.textContent = '[data-session-id="' + tallId + '"] { padding-bottom: 40px; }';
         document.head.appendChild(style);
         const moves = [];
         let builtAt = -1;
         for (let step = 0; builtAt < 0 ? step < 60 : step < builtAt + 3; step++) {
           const edge = list.getBoundingClientRect().top;
           const row = [...list.querySelectorAll('[data-testid="session-item"]')].find((r) => r.getBoundingClientRect().top >= edge);
           if (!row) break;
           const top = row.getBoundingClientRect().top;
           list.scrollTop -= 100;
           await frames(4);
           const now = list.querySelector('[data-session-id="' + row.dataset.sessionId + '"]');
           moves.push(now ? Math.round(now.getBoundingClientRect().top - top) : null);
           if (builtAt < 0 && built()) builtAt = step;
         }
         const height = list.querySelector('[data-session-id="' + tallId + '"]')?.getBoundingClientRect().height ?? 0;
         done(JSON.stringify({ builtAtStart, builtAt, moves, height }));
       })();`,
      [tall.id],
    ),
  );
  assert.equal(result.builtAtStart, false, 'the taller row was not built at the bottom');
  assert.ok(result.builtAt >= 0, `the taller row was built as the list scrolled up: ${JSON.stringify(result)}`);
  assert.ok(result.height >= 80, `the row built is taller than the rows around it: ${JSON.stringify(result)}`);
  // Within a pixel: row heights may be fractional where the scroll position is whole.
  assert.ok(
    result.moves.length > 0 && result.moves.every((m) => m !== null && Math.abs(m - 100) <= 1),
    `each scroll of 100 px moved the top row by 100 px: ${JSON.stringify(result)}`,
  );
});

test('a session made above the view does not move the rows in view', { skip }, async () => {
  // Scrolled a little way down: the top rows, where a new session sorts in, are above the view.
  await openWindow();
  await waitForScript(wd, `return document.querySelector('[data-testid="session-group"] .count')?.textContent === '${MORE + 1}'`, 'every session listed', 60_000);
  const held = JSON.parse(
    await wd.executeAsyncScript(
      `const done = arguments[arguments.length - 1];
       const list = document.querySelector('[data-testid="session-list"]');
       list.scrollTop = 1200;
       requestAnimationFrame(() => requestAnimationFrame(() => {
         const edge = list.getBoundingClientRect().top;
         const row = [...list.querySelectorAll('[data-testid="session-item"]')].find((r) => r.getBoundingClientRect().top >= edge);
         done(JSON.stringify(row ? { id: row.dataset.sessionId, top: row.getBoundingClientRect().top, scrollTop: list.scrollTop, held: list.dataset.held } : null));
       }));`,
    ),
  );
  assert.ok(held && held.scrollTop > 0, `a row in view, the list scrolled: ${JSON.stringify(held)}`);
  // With the pointer over the list, the calm order would put the new session after the others.
  assert.equal(held.held, 'false', 'the order is not held');
  await desktop.oc.json('/session', { method: 'POST', body: { title: 'Made while the list was scrolled' } });
  await waitForScript(wd, `return document.querySelector('[data-testid="session-group"] .count')?.textContent === '${MORE + 2}'`, 'the new session listed', 60_000);
  const top = await wd.executeAsyncScript(
    `const done = arguments[arguments.length - 1];
     requestAnimationFrame(() => requestAnimationFrame(() =>
       done(document.querySelector('[data-testid="session-list"] [data-session-id="' + arguments[0] + '"]')?.getBoundingClientRect().top ?? null)));`,
    [held.id],
  );
  assert.ok(top !== null && Math.abs(top - held.top) <= 1, `the row at the top of the view stayed at ${held.top} px (now ${top})`);
});
