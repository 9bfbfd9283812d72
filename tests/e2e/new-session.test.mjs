// New session against the real `opencode serve`: the folder picker suggests the server's own
// folder and the recent ones, refuses a folder that does not exist (checked by the backend:
// the browser cannot), creates the session in the chosen folder, puts the cursor in its
// composer, and shows a readable title until OpenCode names the session.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startStack } from '../support/stack.mjs';

const PASSWORD = 'e2e-secret';
const WAIT = 20_000;

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

const dialog = '[data-testid="new-session-dialog"]';
const dirInput = '[data-testid="new-session-directory"]';
const sessionsOnServer = async () => (await oc.json('/session')).length;
const options = () => page.$$eval('[data-testid="folder-option"]', (els) => els.map((e) => e.dataset.folder));

async function openDialog() {
  await page.locator('[data-testid="new-session"]').click();
  await page.locator(dialog).waitFor({ state: 'visible', timeout: WAIT });
  await page.locator('[data-testid="folder-option"]').first().waitFor({ state: 'visible', timeout: WAIT });
}

test('a folder that does not exist is refused at the field, and nothing is created', async () => {
  await page.goto(cc.url);
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ timeout: WAIT });
  await openDialog();
  // The server runs in its project folder: offered, and the default with nothing open.
  assert.ok((await options()).includes(oc.projectDir), `suggestions: ${await options()}`);
  assert.equal(await page.inputValue(dirInput), oc.projectDir);

  const before = await sessionsOnServer();
  const missing = path.join(oc.projectDir, 'no-such-folder');
  await page.fill(dirInput, missing);
  await page.locator('[data-testid="new-session-create"]').click();
  const problem = page.locator('[data-testid="new-session-problem"][role="alert"]');
  await problem.waitFor({ timeout: WAIT });
  assert.match(await problem.innerText(), /does not exist/);
  assert.ok(await page.locator(dialog).isVisible(), 'the dialog stays open with the path');
  assert.equal(await page.inputValue(dirInput), missing);

  // A file is not a folder either.
  const file = path.join(oc.projectDir, 'README.txt');
  fs.writeFileSync(file, 'not a folder');
  await page.fill(dirInput, file);
  await page.locator('[data-testid="new-session-create"]').click();
  await page.locator('[data-testid="new-session-problem"]', { hasText: 'is a file' }).waitFor({ timeout: WAIT });
  assert.equal(await sessionsOnServer(), before, 'nothing reached the server');
  assert.deepEqual(await page.evaluate(() => window.__toasts), [], 'shown at the field, not as a toast');
  await page.keyboard.press('Escape');
});

test('a folder from the list creates the session there, with the cursor in its composer and a readable title', async () => {
  const other = path.join(oc.projectDir, 'sub project');
  fs.mkdirSync(other);
  await openDialog();
  // Searching narrows the list; typing a new path works as well.
  await page.fill(dirInput, other);
  await page.locator('[data-testid="new-session-create"]').click();
  await page.locator(dialog).waitFor({ state: 'detached', timeout: WAIT });

  const chat = page.locator('[data-testid="chat"]');
  await chat.waitFor({ timeout: WAIT });
  const id = await chat.getAttribute('data-session-id');
  const created = await oc.json(`/session/${id}`);
  assert.equal(created.directory, other, 'created in the chosen folder');
  await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'composer-input', null, { timeout: WAIT });

  // OpenCode's placeholder title is `New session - <ISO time>`; the UI shows a time instead.
  assert.match(created.title, /^New session - \d{4}-/);
  const heading = await page.locator('[data-testid="chat"] h1').innerText();
  assert.match(heading, /^New session · /);
  assert.doesNotMatch(heading, /\d{4}-\d{2}-\d{2}T/);
  const item = page.locator(`[data-testid="session-item"][data-session-id="${id}"]`);
  await item.waitFor({ timeout: WAIT });
  assert.doesNotMatch(await item.innerText(), /\d{4}-\d{2}-\d{2}T/);

  // Next time the folder is the first of the recent ones, and a search finds it.
  await openDialog();
  assert.equal((await options())[0], other);
  await page.fill(dirInput, 'sub proj');
  assert.deepEqual(await options(), [other]);
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  assert.equal(await page.inputValue(dirInput), other, 'Enter on a suggestion picks it');
  await page.keyboard.press('Escape');
  assert.deepEqual(pageErrors, []);
});

test('a folder list that comes while the title is typed leaves the keys in the title', async () => {
  // The suggestions are held until the title has its text, as on a slow server.
  let release = () => undefined;
  const held = new Promise((resolve) => (release = resolve));
  const hold = async (route) => {
    if (route.request().postDataJSON()?.cmd === 'folders') await held;
    await route.continue();
  };
  await page.route('**/api', hold);
  try {
    const folder = await page.locator('[data-testid="chat"]').getAttribute('data-session-id').then(async (id) => (await oc.json(`/session/${id}`)).directory);
    await page.locator('[data-testid="new-session"]').click();
    await page.locator(dialog).waitFor({ state: 'visible', timeout: WAIT });
    const title = page.locator('[data-testid="new-session-title"]');
    await title.fill('Greeting in English');
    release();
    await page.locator('[data-testid="folder-option"]').first().waitFor({ state: 'visible', timeout: WAIT });
    // The next keys go where the user is typing, not into the folder.
    await page.keyboard.type(' today');
    assert.equal(await title.inputValue(), 'Greeting in English today');
    assert.equal(await page.inputValue(dirInput), folder, 'the folder is as it was');
    await page.keyboard.press('Escape');
  } finally {
    release();
    await page.unroute('**/api', hold);
  }
  assert.deepEqual(pageErrors, []);
});
