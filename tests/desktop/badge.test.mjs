// The desktop window counts what needs the person: a turn that finishes in a session not looked
// at raises the count in the native window title (read from the X server, not the page's
// document title) and on the launcher icon (the launcher-entry signal docks listen for, heard on
// a session bus of the test's own, naming the desktop entry `make install` installs). Runs the
// real window through tauri-driver under Xvfb, like smoke.test.mjs.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { DESKTOP_ENTRY } from '../support/desktop-entry.mjs';
import { startSessionBus } from '../support/session-bus.mjs';
import { desktopPrerequisites, openSessionTitled, startDesktop, waitForScript } from '../support/webdriver.mjs';

const PASSWORD = 'desktop-secret';
const TITLE = 'Looked at in the window';
const { missing, skip } = desktopPrerequisites();

let desktop;
let bus;

before(async () => {
  if (skip) return;
  if (missing) throw new Error(`desktop badge test cannot run: ${missing}`);
  bus = await startSessionBus();
  desktop = await startDesktop({
    title: TITLE,
    password: PASSWORD,
    prefix: 'crosscheck-desktop-badge-',
    env: () => ({ DBUS_SESSION_BUS_ADDRESS: bus.address }),
  });
});

after(async () => {
  await desktop?.stop();
  await bus?.stop();
});

/** The names the X server holds for its windows that name the app (the native titles). */
function nativeTitles() {
  const tree = execFileSync('xwininfo', ['-root', '-tree'], { encoding: 'utf8' });
  return [...tree.matchAll(/^\s*0x[0-9a-f]+ "([^"]*Crosscheck[^"]*)"/gim)].map((m) => m[1]);
}

async function nativeTitle(pattern, what) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const titles = nativeTitles();
    const found = titles.find((t) => pattern.test(t));
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no native window titled ${what} (titles: ${JSON.stringify(titles)})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Waits for a launcher-entry update after the first `after` that `accept` takes; returns it and its index. */
async function launcherUpdate(accept, what, after = 0) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const index = bus.updates().findIndex((u, i) => i >= after && accept(u));
    if (index >= 0) return { ...bus.updates()[index], index };
    if (Date.now() > deadline) throw new Error(`no launcher update ${what} (heard: ${JSON.stringify(bus.updates())})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('an unread finished turn raises the count in the native window title and on the launcher icon', { skip }, async () => {
  const busy = await desktop.oc.json('/session', { method: 'POST', body: { title: 'Working elsewhere' } });
  const wd = await desktop.open();
  await openSessionTitled(wd, TITLE);
  await waitForScript(wd, `return document.querySelector('[data-testid="server-status"]')?.dataset.state === 'ready'`, 'the server ready');
  await waitForScript(
    wd,
    `return !!document.querySelector('[data-testid="session-item"][data-session-id="${busy.id}"]')`,
    'the other session listed',
  );
  // Nothing needs the person yet: the window is titled plainly.
  await nativeTitle(/^Crosscheck$/, '"Crosscheck"');

  await desktop.oc.fetch(`/session/${busy.id}/prompt_async`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ parts: [{ type: 'text', text: 'Summarize the repository.' }] }),
  });
  await waitForScript(
    wd,
    `return !!document.querySelector('[data-testid="session-item"][data-session-id="${busy.id}"] [data-testid="session-unread"]')`,
    'the finished turn unread',
    60_000,
  );
  const title = await nativeTitle(/^\(\d+\) Crosscheck$/, '"(n) Crosscheck"');
  assert.equal(title, '(1) Crosscheck');
  assert.equal(await wd.getTitle(), '(1) Crosscheck', 'the page says the same');
  const { index, ...update } = await launcherUpdate((u) => u.count === 1, 'counting 1');
  assert.deepEqual(update, { uri: `application://${DESKTOP_ENTRY}`, count: 1, visible: true });

  // Looking at the session clears the item, and the icon's count with it.
  await wd.executeScript(
    `document.querySelector('[data-testid="session-item"][data-session-id="${busy.id}"] button.main').click()`,
  );
  await nativeTitle(/^Crosscheck$/, '"Crosscheck" again');
  const cleared = await launcherUpdate((u) => u.count === 0, 'clearing the count', index + 1);
  assert.equal(cleared.visible, false);
});
