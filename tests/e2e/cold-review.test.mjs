// Cold review in the app, end to end: a session's plan-like reply is reviewed from its
// "Cold review" button by a reviewer model served by the scripted model server (OpenAI-
// compatible, reached through OPENAI_BASE_URL and a review.json naming an OpenAI model as the
// floor); the Reviews tab opens and shows the flagged row with the findings next to the draft.
// Then the real `crosscheck gate plan` binary writes a row into the same ledger from another
// process, and the open panel shows it at once (the app pushes ledger writes) and after reopening the tab.
// Reviewing the reply again keeps the first review under the row; after a restart a fresh
// browser still opens the reply a review came from (the ledger keeps the session).
import { newRecordedPage, sleep, until as untilCondition } from '../support/page.mjs';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launchBrowser, screenshot } from '../support/browser.mjs';
import { makeTempDir } from '../support/cleanup.mjs';
import { crosscheckBin, startCrosscheck } from '../support/crosscheck.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';

const PASSWORD = 'e2e-secret';
const WAIT = 60_000;
const TITLE = 'Plan the CRLF work';

const PLAN = [
  '# Plan: parse CRLF config files',
  '',
  'Closes #12.',
  '',
  '## Increments',
  '',
  '1. Accept CRLF line endings in the config reader.',
  '   - Tests: a CRLF fixture.',
  '   - Status: Not started',
  '',
  '## Risks',
  '',
  '- A BOM before the first key: fail-closed, the reader reports the line.',
].join('\n');

const FLAGGED_REVIEW = [
  'P1 FAIL — "Increments" 1: no file or function is named; name the reader module.',
  'P2 PASS — one Status line per increment.',
  'P3 PASS — closes #12.',
  'P4 PASS — a regression fixture for CRLF.',
  'P5 PASS — looked for aliases, shims and migrations: none.',
  'P6 PASS — the BOM risk names its direction.',
  'P7 PASS — no always/never claims.',
  'P8 PASS — delivery is a single increment.',
  'VERDICT: FLAGS (1)',
].join('\n');

const CLEAN_REVIEW = [...Array.from({ length: 8 }, (_, i) => `P${i + 1} PASS — checked.`), 'VERDICT: CLEAN'].join('\n');
const GATE_PLAN = '# Gate plan\n\nCloses #13.\n\n1. Rename the flag.\n   Status: Not started\n';

let ms;
let oc;
let cc;
let browser;
let page;
let session;
let reviewerEnv;
let pageErrors = [];

before(async () => {
  ms = await startModelServer();
  oc = await startOpencode({ modelUrl: ms.url, password: PASSWORD });
  session = await oc.json('/session', { method: 'POST', body: { title: TITLE } });
  // The reviewer: GPT-5 as the floor (OpenCode's `fake-model` author ranks below it), so the
  // OpenAI-compatible client sends the review to the model server.
  const root = makeTempDir('crosscheck-cold-review-');
  const configDir = path.join(root, 'config');
  fs.mkdirSync(configDir, { recursive: true });
  fs.writeFileSync(
    path.join(configDir, 'review.json'),
    JSON.stringify({ floorModel: 'gpt-5', reviewTimeoutMs: 30_000, reviewTimeoutMsPer1000Chars: 0 }),
  );
  reviewerEnv = { OPENAI_BASE_URL: ms.baseURL, OPENAI_API_KEY: 'sk-test' };
  cc = await startCrosscheck({
    opencodeUrl: oc.url,
    password: PASSWORD,
    dataDir: path.join(root, 'data'),
    configDir,
    env: reviewerEnv,
  });
  browser = await launchBrowser();
  ({ page, pageErrors } = await newRecordedPage(browser));
});

after(async () => {
  await browser?.close();
  await cc?.stop();
  await oc?.dispose();
  await ms?.close();
});


const until = (probe, what, timeoutMs = WAIT) => untilCondition(probe, what, timeoutMs);

const rows = () => page.locator('[data-testid="reviews-panel"] [data-testid="review-row"]');
const toasts = () => page.evaluate(() => window.__toasts ?? []);

/** Runs the real `crosscheck gate plan` with the app's data and config dirs. */
function runGate(args) {
  return runCrosscheck(['gate', 'plan', ...args]);
}

/** Runs the real `crosscheck` binary with the app's data and config dirs. */
function runCrosscheck(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(crosscheckBin(), args, {
      env: {
        ...process.env,
        CROSSCHECK_DATA_DIR: cc.dataDir,
        CROSSCHECK_CONFIG_DIR: cc.configDir,
        ...reviewerEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (s) => (stdout += s));
    child.stderr.on('data', (s) => (stderr += s));
    const timer = setTimeout(() => child.kill('SIGKILL'), WAIT);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test('the Cold review button reviews a plan-like reply and the Reviews tab shows the findings', async () => {
  await page.goto(cc.url);
  await page.locator(`[data-testid="session-item"][data-session-id="${session.id}"]`).click({ timeout: WAIT });

  // The command is offered in the composer's autocomplete, described from the locale.
  const input = page.locator('[data-testid="chat"] [data-testid="composer-input"]').first();
  await input.waitFor({ state: 'visible', timeout: WAIT });
  await input.fill('/cold');
  const item = page.locator('[data-testid="command-menu"] [data-testid="command-item"][data-name="cold-review"]');
  await item.waitFor({ state: 'visible', timeout: WAIT });
  assert.match(await item.innerText(), /Cold review of the latest reply/);
  await input.fill('');

  // A plan-like reply.
  ms.script([{ text: PLAN }]);
  await input.fill('Write the plan for CRLF support');
  await input.press('Enter');
  const reply = page.locator('[data-testid="message-assistant"]').filter({ hasText: 'Plan: parse CRLF config files' }).first();
  await reply.waitFor({ state: 'visible', timeout: WAIT });
  await until(async () => (await reply.getAttribute('aria-busy')) !== 'true', 'the reply to finish');
  const replyId = await reply.getAttribute('data-message-id');

  // Review it.
  ms.script([{ text: FLAGGED_REVIEW }]);
  const before = ms.chatRequests().length;
  await reply.hover();
  const button = reply.locator('[data-testid="cold-review-button"]');
  assert.equal(await button.getAttribute('aria-label'), 'Cold review');
  await button.click({ timeout: WAIT });

  // The Reviews tab opens by itself and the row settles as flagged.
  const panel = page.locator('[data-testid="context-panel"] [data-testid="reviews-panel"]');
  await panel.waitFor({ state: 'visible', timeout: WAIT });
  const flagged = page.locator('[data-testid="reviews-panel"] [data-testid="review-row"][data-status="flagged"]');
  await flagged.first().waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await rows().count(), 1);
  const row = rows().first();
  assert.equal(await row.getAttribute('data-source'), 'message');
  assert.equal(await row.getAttribute('data-kind'), 'plan');
  const rowText = await row.innerText();
  assert.match(rowText, /Flagged \(1\)/);
  assert.match(rowText, /gpt-5/);
  assert.match(rowText, /chat reply/);

  // The review started from the button is selected: draft left, findings right.
  const detail = page.locator('[data-testid="review-detail"]');
  await detail.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await detail.getAttribute('data-status'), 'flagged');
  const draft = page.locator('[data-testid="review-draft"]');
  await draft.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal((await draft.innerText()).trim(), PLAN.trim());
  const findings = page.locator('[data-testid="review-finding"]');
  assert.equal(await findings.count(), 1);
  assert.match(await findings.first().innerText(), /^P1 FAIL — "Increments" 1: no file or function is named/);
  assert.match(await page.locator('[data-testid="review-findings"]').innerText(), /VERDICT: FLAGS \(1\)/);
  const draftBox = await draft.boundingBox();
  const findingsBox = await page.locator('[data-testid="review-findings"]').boundingBox();
  assert.ok(draftBox.x + draftBox.width <= findingsBox.x + 1, 'the draft is left of the findings');

  // What the reviewer got: the reply as a plan from a message, under the P1-P8 prompt.
  const sent = ms.chatRequests().slice(before);
  assert.equal(sent.length, 1, 'one reviewer call');
  assert.equal(sent[0].body.model, 'gpt-5');
  assert.equal(sent[0].headers.authorization, 'Bearer sk-test');
  assert.equal('temperature' in sent[0].body, false);
  assert.match(sent[0].lastUserText, /^PLAN \(message\):/);
  assert.ok(sent[0].lastUserText.includes(PLAN.trim()));
  assert.ok(!sent[0].lastUserText.includes('Write the plan for CRLF support'), 'no session context');
  assert.match(JSON.stringify(sent[0].body.messages), /P8/);

  // The button is free again, and a notice told the outcome.
  await until(async () => !(await button.isDisabled()), 'the button to be enabled again');
  const notes = await until(async () => (await toasts()).filter((t) => /flagged/i.test(t.text)), 'the flagged notice');
  assert.equal(notes[0].level, 'info');
  assert.deepEqual((await toasts()).filter((t) => t.level === 'error'), []);
  assert.ok(replyId);

  // For the screenshot: more room for the panel, the session list folded away.
  await page.getByRole('button', { name: 'Toggle session list' }).click();
  const separator = page.locator('[data-testid="context-panel"] [role="separator"]');
  await separator.focus();
  for (let i = 0; i < 4; i++) await separator.press('Shift+ArrowLeft');
  await page.evaluate(() => document.activeElement?.blur());
  for (const close of await page.getByRole('button', { name: 'Dismiss notification' }).all()) await close.click();
  await page.mouse.move(0, 0);
  await screenshot(page, 'reviews-panel');
});

test('a row written by the `crosscheck gate plan` binary is pushed to the open panel, and shown on reopening', async () => {
  // Count the panel's own ledger reads: the gate's row must arrive without one.
  let listReads = 0;
  const onRequest = (request) => {
    if (request.url().endsWith('/api') && (request.postData() ?? '').includes('"listReviews"')) listReads++;
  };
  page.on('request', onRequest);
  ms.script([{ text: CLEAN_REVIEW }]);
  const started = Date.now();
  const gate = await runGate(['--text', GATE_PLAN, '--cwd', oc.projectDir]);
  // The first attempt of every plan pauses, even when clean.
  assert.equal(gate.code, 2, `gate output: ${gate.stdout}\n${gate.stderr}`);
  assert.match(gate.stderr, /Automated cold review \(Crosscheck\) paused this plan/);
  assert.match(gate.stderr, /VERDICT: CLEAN/);

  // Another process wrote it: the app saw the write and pushed the row; nobody asked.
  await until(async () => (await rows().count()) === 2, 'the gate row, pushed');
  console.log(`gate row shown ${Date.now() - started} ms after the gate started (gate included)`);
  page.off('request', onRequest);
  assert.equal(listReads, 0, 'the panel read the ledger itself');
  const first = rows().first();
  assert.equal(await first.getAttribute('data-status'), 'clean');
  assert.equal(await first.getAttribute('data-source'), 'parameter');
  assert.equal(await rows().nth(1).getAttribute('data-status'), 'flagged');

  // Its text is shown when selected.
  await first.click();
  await until(async () => (await page.locator('[data-testid="review-draft"]').innerText()).includes('Gate plan'), "the gate's draft");

  // A second gate run of the same plan proceeds (ledger hit) and changes nothing.
  const again = await runGate(['--text', GATE_PLAN, '--cwd', oc.projectDir]);
  assert.equal(again.code, 0, again.stderr);

  // Closing and reopening the tab reloads the list too.
  await page.locator('[data-testid="context-tab"][data-key="reviews"] [data-testid="close-tab"]').click();
  await page.locator('[data-testid="reviews-panel"]').waitFor({ state: 'detached', timeout: WAIT });
  await page.locator('[data-testid="open-reviews"]').click();
  await page.locator('[data-testid="reviews-panel"]').waitFor({ state: 'visible', timeout: WAIT });
  await until(async () => (await rows().count()) === 2, 'both rows after reopening');
  assert.deepEqual(pageErrors, []);
});

test('the verdict filter narrows the list; a row opens the reply it reviewed and Review again runs it anew', async () => {
  await until(async () => (await rows().count()) === 2, 'both rows');
  const verdict = page.locator('[data-testid="reviews-verdict"]');
  await verdict.selectOption('flagged');
  await until(async () => (await rows().count()) === 1, 'only the flagged row');
  assert.equal(await rows().first().getAttribute('data-source'), 'message');
  // Select it (a click on the selected row would close it).
  if ((await rows().first().getAttribute('aria-pressed')) !== 'true') await rows().first().click();
  const open = page.locator('[data-testid="review-open"]');
  await open.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await open.innerText(), 'Open the reply');
  await page.mouse.move(0, 0);
  await screenshot(page, 'reviews-panel-filter-open-again');

  // Open: the reviewed reply is brought into view in its session and marked.
  await open.click();
  await page.locator(`[data-testid="chat"][data-session-id="${session.id}"] [data-revealed="true"] [data-testid="message-assistant"]`)
    .filter({ hasText: 'Plan: parse CRLF config files' })
    .waitFor({ timeout: WAIT });

  // Review again: the same reply goes to the reviewer once more and the row takes the new verdict.
  ms.script([{ text: CLEAN_REVIEW }]);
  const before = ms.chatRequests().length;
  await page.locator('[data-testid="review-again"]').click();
  await until(async () => ms.chatRequests().length > before, 'the reviewer asked again');
  assert.ok(ms.chatRequests().at(-1).lastUserText.includes(PLAN.trim()), 'the same reply was reviewed');
  await verdict.selectOption('');
  const appRow = page.locator('[data-testid="reviews-panel"] [data-testid="review-row"][data-source="message"]');
  await until(async () => (await appRow.getAttribute('data-status')) === 'clean', 'the row clean after the second review');

  // The first review is not replaced: it is listed under the row, with its verdict, reviewer
  // and findings count.
  const earlier = page.locator('[data-testid="reviews-panel"] [data-testid="review-history"] [data-testid="review-earlier"]');
  await until(async () => (await earlier.count()) === 1, 'the earlier review under the row');
  assert.equal(await earlier.first().getAttribute('data-status'), 'flagged');
  const earlierText = await earlier.first().innerText();
  assert.match(earlierText, /Flagged \(1\)/);
  assert.match(earlierText, /gpt-5/);
  for (const close of await page.getByRole('button', { name: 'Dismiss notification' }).all()) await close.click();
  await page.mouse.move(0, 0);
  await screenshot(page, 'reviews-panel-history');
  assert.deepEqual(pageErrors, []);
});

test('after a restart, a fresh browser opens the session a review came from (the ledger keeps it)', async () => {
  await cc.stop();
  cc = await startCrosscheck({
    opencodeUrl: oc.url,
    password: PASSWORD,
    dataDir: cc.dataDir,
    configDir: cc.configDir,
    env: reviewerEnv,
  });
  // A new page has a new context: nothing from the first browser's storage.
  await page.close();
  ({ page, pageErrors } = await newRecordedPage(browser));
  await page.goto(cc.url);
  await page.locator('[data-testid="open-reviews"]').click({ timeout: WAIT });
  await page.locator('[data-testid="reviews-panel"]').waitFor({ state: 'visible', timeout: WAIT });
  const appRow = page.locator('[data-testid="reviews-panel"] [data-testid="review-row"][data-source="message"]');
  await appRow.waitFor({ state: 'visible', timeout: WAIT });
  await appRow.click();
  const open = page.locator('[data-testid="review-open"]');
  await open.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await open.innerText(), 'Open the reply');
  await open.click();
  await page.locator(`[data-testid="chat"][data-session-id="${session.id}"] [data-revealed="true"] [data-testid="message-assistant"]`)
    .filter({ hasText: 'Plan: parse CRLF config files' })
    .waitFor({ timeout: WAIT });
  // The history survived the restart too.
  assert.equal(await page.locator('[data-testid="review-history"] [data-testid="review-earlier"]').count(), 1);
  assert.deepEqual(pageErrors, []);
});

test('a commit gate\'s row shows the staged diff in colour: added and removed lines marked and tinted apart', async () => {
  const repo = makeTempDir('crosscheck-cold-review-repo-');
  const git = (...args) => execFileSync('git', ['-C', repo, ...args], { stdio: 'pipe' });
  git('init', '-q');
  git('config', 'user.email', 'e2e@example.invalid');
  git('config', 'user.name', 'e2e');
  fs.writeFileSync(path.join(repo, 'a.rs'), 'fn a() {}\nfn old() {}\n');
  git('add', 'a.rs');
  git('commit', '-q', '-m', 'one');
  fs.writeFileSync(path.join(repo, 'a.rs'), 'fn a() {}\nfn new() {}\n');
  git('add', 'a.rs');
  ms.script([{ text: [...Array.from({ length: 8 }, (_, i) => `J${i + 1} PASS — checked.`), 'VERDICT: CLEAN'].join('\n') }]);
  const gate = await runCrosscheck(['gate', 'commit', '--cwd', repo]);
  assert.equal(gate.code, 1, `the first commit of a text pauses: ${gate.stdout}\n${gate.stderr}`);

  const commitRow = page.locator('[data-testid="reviews-panel"] [data-testid="review-row"][data-kind="commit"]');
  await commitRow.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await commitRow.getAttribute('data-source'), 'staged');
  await commitRow.click();
  const lines = page.locator('[data-testid="review-diff"] [data-testid="diff-line"]');
  await until(async () => (await lines.count()) > 0, 'the staged diff');
  const tint = (kind) =>
    page.locator(`[data-testid="review-diff"] [data-testid="diff-line"][data-kind="${kind}"]`).first()
      .evaluate((el) => getComputedStyle(el.querySelector('td:last-child') ?? el).backgroundColor);
  const added = await tint('add');
  const removed = await tint('del');
  assert.match(await page.locator('[data-testid="review-diff"] [data-kind="add"]').first().innerText(), /fn new\(\)/);
  assert.match(await page.locator('[data-testid="review-diff"] [data-kind="del"]').first().innerText(), /fn old\(\)/);
  assert.notEqual(added, removed, 'added and removed lines are tinted apart');
  for (const colour of [added, removed]) assert.doesNotMatch(colour, /^rgba\(0, 0, 0, 0\)$|^transparent$/, 'a line has a tint');
  // A gate's row came from no session: nothing to open, nothing to review again from here.
  assert.equal(await page.locator('[data-testid="review-open"]').count(), 0);

  // The folder filter: the repository's folder shows its commit only, the project's its plans.
  const folder = page.locator('[data-testid="reviews-folder"]');
  const all = await rows().count();
  await folder.selectOption(fs.realpathSync(repo));
  await until(async () => (await rows().count()) === 1, 'only the repository\'s row');
  assert.equal(await rows().first().getAttribute('data-kind'), 'commit');
  await folder.selectOption(oc.projectDir);
  await until(async () => (await rows().count()) === all - 1, 'only the project\'s rows');
  assert.equal(await page.locator('[data-testid="reviews-panel"] [data-testid="review-row"][data-kind="commit"]').count(), 0);
  await folder.selectOption('');
  assert.deepEqual(pageErrors, []);
});
