// Going back, branching off and attaching files, in Chromium against the real `opencode serve`:
// fork opens a new session that OpenCode holds; revert hides the later messages, Redo brings
// them back, and edit-and-resend makes OpenCode drop them (checked through OpenCode's API); a
// file attached in the composer and a file picked from the `@` menu reach OpenCode as `file`
// parts and the model as their content; a mention whose real path leaves the folder (a link to
// a file outside it, to /etc/passwd, a linked parent folder) is refused and reaches nobody.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launchBrowser, screenshot } from '../support/browser.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { subscribeEvents } from '../support/events.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';

const PASSWORD = 'e2e-secret';
const TITLE = 'History session';
const UI_TIMEOUT = 20_000;
const FIRST = 'Write the plan for the parser';
const SECOND = 'Now add tests for the parser';

let ms;
let oc;
let cc;
let browser;
let page;
let events;
let session;

before(async () => {
  ms = await startModelServer();
  oc = await startOpencode({ modelUrl: ms.url, password: PASSWORD });
  // OpenCode lists a folder's files once, when it first works in it: write them first.
  fs.mkdirSync(path.join(oc.projectDir, 'src'), { recursive: true });
  fs.writeFileSync(path.join(oc.projectDir, 'src', 'main.rs'), 'fn main() { println!("mentioned-file-body"); }\n');
  fs.writeFileSync(path.join(oc.projectDir, 'README.md'), '# readme\n');
  // Links inside the folder to what lies outside it: a file of another folder, and a folder
  // holding one (a link in a parent component of the mentioned path).
  const outside = fs.mkdtempSync(path.join(oc.root, 'outside-'));
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'outside-secret-body\n');
  fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(oc.projectDir, 'src', 'leak.rs'));
  fs.symlinkSync(outside, path.join(oc.projectDir, 'elsewhere'));
  fs.symlinkSync('/etc/passwd', path.join(oc.projectDir, 'passwd.txt'));
  events = await subscribeEvents(oc.url, { headers: oc.authHeaders });
  session = await oc.json('/session', { method: 'POST', body: { title: TITLE } });
  for (const text of [FIRST, SECOND]) {
    await oc.json(`/session/${session.id}/message`, { method: 'POST', body: { parts: [{ type: 'text', text }] } });
  }
  cc = await startCrosscheck({ opencodeUrl: oc.url, password: PASSWORD });
  browser = await launchBrowser();
  page = await browser.newPage();
  page.on('pageerror', (err) => console.log(`page error: ${err.message}`));
  await page.goto(cc.url);
});

after(async () => {
  events?.close();
  await browser?.close();
  await cc?.stop();
  await oc?.dispose();
  await ms?.close();
});

/** Opens a session from the sidebar and waits for its messages. */
async function open(id, users) {
  await page.locator(`[data-testid="session-item"][data-session-id="${id}"]`).click();
  await page.locator(`[data-testid="chat"] [data-testid="message-user"]`).nth(users - 1).waitFor({ timeout: UI_TIMEOUT });
}

/** OpenCode's messages of a session: [role, visible text] each. */
async function messagesOf(id) {
  const list = await oc.json(`/session/${id}/message`);
  return list.map((m) => [m.info.role, m.parts.filter((p) => p.type === 'text' && !p.synthetic).map((p) => p.text).join('')]);
}

function userMessage(text) {
  return page.locator('[data-testid="message-user"]').filter({ hasText: text });
}

async function sendAndWait(text) {
  const from = events.events.length;
  const input = page.locator('[data-testid="composer-input"]');
  await input.press('Enter');
  await events.waitForIdle(session.id, { from, timeoutMs: 60_000 });
  await page.locator('[data-testid="message-assistant"]').filter({ hasText: `FAKE-REPLY: ${text}` }).first()
    .waitFor({ timeout: UI_TIMEOUT });
}

test('fork from a user message makes a new session in OpenCode and opens it', async () => {
  await open(session.id, 2);
  const fork = userMessage(SECOND).locator('[data-testid="fork-message"]');
  assert.match(await fork.getAttribute('aria-label'), /Fork/);
  await userMessage(SECOND).hover();
  await fork.click();
  // The new session opens in the centre, its composer holding the message to edit.
  await page.waitForFunction((id) => {
    const chat = document.querySelector('[data-testid="chat"]');
    return chat && chat.getAttribute('data-session-id') !== id;
  }, session.id, { timeout: UI_TIMEOUT });
  const forkedId = await page.locator('[data-testid="chat"]').first().getAttribute('data-session-id');
  const forked = await oc.json(`/session/${forkedId}`);
  assert.match(forked.title, /fork/);
  assert.equal(forked.directory, session.directory);
  assert.deepEqual(await messagesOf(forkedId), [['user', FIRST], ['assistant', `FAKE-REPLY: ${FIRST}`]]);
  assert.equal(await page.locator('[data-testid="composer-input"]').inputValue(), SECOND);
  // The original is untouched.
  assert.equal((await messagesOf(session.id)).length, 4);
});

test('revert hides the later messages, asks first, and Redo brings them back', async () => {
  await open(session.id, 2);
  const second = (await oc.json(`/session/${session.id}/message`)).filter((m) => m.info.role === 'user')[1].info.id;
  await userMessage(SECOND).hover();
  await userMessage(SECOND).locator('[data-testid="revert-message"]').click();
  const dialog = page.locator('[data-testid="confirm-dialog"]');
  await dialog.waitFor({ timeout: UI_TIMEOUT });
  assert.equal((await oc.json(`/session/${session.id}`)).revert, undefined, 'nothing happens before the answer');
  await dialog.locator('[data-testid="confirm"]').click();
  await page.locator('[data-testid="revert-bar"]').waitFor({ timeout: UI_TIMEOUT });
  await userMessage(SECOND).waitFor({ state: 'detached', timeout: UI_TIMEOUT });
  assert.equal(await page.locator('[data-testid="revert-bar"]').getAttribute('data-count'), '2');
  assert.equal((await oc.json(`/session/${session.id}`)).revert?.messageID, second);

  await page.locator('[data-testid="redo"]').click();
  await userMessage(SECOND).waitFor({ timeout: UI_TIMEOUT });
  await page.locator('[data-testid="revert-bar"]').waitFor({ state: 'detached', timeout: UI_TIMEOUT });
  assert.equal((await oc.json(`/session/${session.id}`)).revert, undefined);
});

test('edit and resend replaces the message and what followed it in OpenCode', async () => {
  await open(session.id, 2);
  await userMessage(SECOND).hover();
  await userMessage(SECOND).locator('[data-testid="edit-message"]').click();
  await page.locator('[data-testid="confirm-dialog"] [data-testid="confirm"]').click();
  const input = page.locator('[data-testid="composer-input"]');
  await page.locator('[data-testid="composer-editing"]').waitFor({ timeout: UI_TIMEOUT });
  assert.equal(await input.inputValue(), SECOND);
  const edited = 'Now add property tests for the parser';
  await input.fill(edited);
  await sendAndWait(edited);
  assert.deepEqual(await messagesOf(session.id), [
    ['user', FIRST], ['assistant', `FAKE-REPLY: ${FIRST}`],
    ['user', edited], ['assistant', `FAKE-REPLY: ${edited}`],
  ]);
  assert.equal(await userMessage(SECOND).count(), 0);
  assert.equal(ms.chatRequests().at(-1).lastUserText, edited);
});

test('a file attached in the composer reaches OpenCode as a file part', async () => {
  await open(session.id, 2);
  const dir = fs.mkdtempSync(path.join(oc.root, 'upload-'));
  const notes = path.join(dir, 'notes.txt');
  fs.writeFileSync(notes, 'attached-file-body: keep the parser small\n');
  await page.locator('[data-testid="attach-input"]').setInputFiles(notes);
  await page.locator('[data-testid="attachment-chip"][data-name="notes.txt"]').waitFor({ timeout: UI_TIMEOUT });
  const input = page.locator('[data-testid="composer-input"]');
  await input.fill('Read the notes');
  await sendAndWait('Read the notes');
  const last = (await oc.json(`/session/${session.id}/message`)).filter((m) => m.info.role === 'user').at(-1);
  const file = last.parts.find((p) => p.type === 'file');
  assert.equal(file?.filename, 'notes.txt');
  assert.equal(file?.mime, 'text/plain');
  assert.match(file?.url ?? '', /^data:text\/plain;base64,/);
  assert.match(ms.chatRequests().at(-1).lastUserText, /attached-file-body: keep the parser small/);
  assert.equal(await page.locator('[data-testid="attachment-chip"]').count(), 0);
});

test('@ suggests files of the session folder and attaches the one picked', async () => {
  await open(session.id, 3);
  const dir = fs.mkdtempSync(path.join(oc.root, 'shot-'));
  const png = path.join(dir, 'screen.png');
  fs.copyFileSync(new URL('../../icons/128x128.png', import.meta.url), png);
  const plan = path.join(dir, 'plan.md');
  fs.writeFileSync(plan, '# plan\n- keep it small\n');
  await page.locator('[data-testid="attach-input"]').setInputFiles([png, plan]);
  await page.locator('[data-testid="attachment-chip"][data-name="plan.md"]').waitFor({ timeout: UI_TIMEOUT });
  const input = page.locator('[data-testid="composer-input"]');
  await input.fill('');
  await input.pressSequentially('Compare with @mai');
  const item = page.locator('[data-testid="file-item"][data-path="src/main.rs"]');
  await item.waitFor({ timeout: UI_TIMEOUT });
  await screenshot(page, 'attachments');
  await input.press('Enter');
  await page.locator('[data-testid="attachment-chip"][data-name="src/main.rs"]').waitFor({ timeout: UI_TIMEOUT });
  assert.equal(await input.inputValue(), 'Compare with @src/main.rs ');
  // This model takes no images: take it off again.
  await page.locator('[data-testid="attachment-chip"][data-name="screen.png"] [data-testid="remove-attachment"]').click();
  await sendAndWait('Compare with @src/main.rs');
  const last = (await oc.json(`/session/${session.id}/message`)).filter((m) => m.info.role === 'user').at(-1);
  const files = last.parts.filter((p) => p.type === 'file');
  assert.deepEqual(files.map((f) => f.filename), ['plan.md', 'src/main.rs']);
  assert.equal(files[1].url, `file://${oc.projectDir}/src/main.rs`);
  assert.match(ms.chatRequests().at(-1).lastUserText, /mentioned-file-body/);
});

test('an @ mention of a link that leaves the folder is refused and reaches neither OpenCode nor the model', async () => {
  const before = (await oc.json(`/session/${session.id}/message`)).length;
  const requests = ms.chatRequests().length;
  for (const mention of ['src/leak.rs', 'passwd.txt', 'elsewhere/secret.txt']) {
    await assert.rejects(
      cc.api({
        cmd: 'sendPrompt',
        sessionId: session.id,
        text: `Summarise @${mention}`,
        attachments: [{ kind: 'file', path: mention }],
      }),
      /attachment_outside/,
      `${mention} is refused`,
    );
  }
  // Nothing was sent: no new message in OpenCode, no model call, and no secret anywhere.
  assert.equal((await oc.json(`/session/${session.id}/message`)).length, before);
  assert.equal(ms.chatRequests().length, requests);
  const seen = JSON.stringify(ms.chatRequests());
  assert.ok(!seen.includes('outside-secret-body') && !seen.includes('root:x:0'), 'no outside content reached the model');
  // A plain file of the folder is still sent.
  const from = events.events.length;
  await cc.api({ cmd: 'sendPrompt', sessionId: session.id, text: 'Summarise @README.md', attachments: [{ kind: 'file', path: 'README.md' }] });
  await events.waitForIdle(session.id, { from, timeoutMs: 60_000 });
  const last = (await oc.json(`/session/${session.id}/message`)).filter((m) => m.info.role === 'user').at(-1);
  assert.deepEqual(last.parts.filter((p) => p.type === 'file').map((f) => f.filename), ['README.md']);
});
