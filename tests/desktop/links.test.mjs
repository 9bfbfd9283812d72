// A link in a reply opens in the system browser: the desktop window hands it to the opener
// plugin, which on Linux runs `xdg-open URL`. An `xdg-open` first on the app's PATH writes the
// URL it was given to a file, so the test sees the system opener called with the link.
// Runs the real window through tauri-driver under Xvfb, like smoke.test.mjs.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { desktopPrerequisites, openSessionTitled, startDesktop } from '../support/webdriver.mjs';

const PASSWORD = 'desktop-links-secret';
const TITLE = 'Desktop link session';
const LINK = 'https://example.com/crosscheck-link?from=reply';
const { missing, skip } = desktopPrerequisites();

let desktop;
let opened;

before(async () => {
  if (skip) return;
  if (missing) throw new Error(`desktop link test cannot run: ${missing}`);
  desktop = await startDesktop({
    title: TITLE,
    password: PASSWORD,
    prefix: 'crosscheck-desktop-links-',
    env: (appDir) => {
      const binDir = path.join(appDir, 'bin');
      opened = path.join(appDir, 'opened.txt');
      fs.mkdirSync(binDir);
      const opener = path.join(binDir, 'xdg-open');
      fs.writeFileSync(opener, `#!/bin/sh\nprintf '%s\\n' "$@" >> '${opened}'\n`);
      fs.chmodSync(opener, 0o755);
      return { PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}` };
    },
  });
});

after(async () => {
  await desktop?.stop();
});

/** Waits until the file exists and has text. */
async function waitForFile(file, what, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    if (text) return text;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('a link in a reply opens through the system opener', { skip }, async () => {
  desktop.ms.script([{ text: `The page is [the example](${LINK}).` }]);
  const wd = await desktop.open();
  await openSessionTitled(wd, TITLE);
  const input = await wd.waitForElement('[data-testid="composer-input"]', { timeoutMs: 30_000 });
  await wd.sendKeys(input, 'Where is the page?');
  await wd.sendKeys(input, '\uE007'); // Enter
  const link = await wd.waitForElement(`[data-testid="message-assistant"] a[href="${LINK}"]`, { timeoutMs: 60_000 });
  assert.equal(fs.existsSync(opened), false, 'nothing was opened before the click');
  await wd.click(link);
  const text = await waitForFile(opened, 'the system opener to be called');
  assert.deepEqual(text.trim().split('\n'), [LINK]);
});
