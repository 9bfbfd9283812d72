// Sync against the real `opencode serve`: OpenCode killed with SIGKILL while a reply streams and
// started again. The UI must come back in sync by itself: the transcript shows exactly the text
// the server kept (no doubled or missing words), nothing stays busy, and the next reply streams
// in exactly as the server has it. Prints how long the UI took to be back in sync. And after a
// restart the sidebar lists every session the server has: past its page of 100, and in a
// folder of another project.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isAlive, makeTempDir, signalChild } from '../support/cleanup.mjs';
import { sleep, until } from '../support/page.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { startStack } from '../support/stack.mjs';

const UI_TIMEOUT = 20_000;
const TITLE = 'Sync session';

let stack;
let ms;
let oc;
let cc;
let browser;
let page;
let session;

/** `count` numbered words: each is unique, so a doubled or dropped piece shows. */
function words(prefix, count) {
  return Array.from({ length: count }, (_, i) => `${prefix}${String(i + 1).padStart(3, '0')}`).join(' ');
}

/** The numbered words of a text, in order. */
function tokens(text, prefix) {
  return text.match(new RegExp(`${prefix}\\d{3}`, 'g')) ?? [];
}

/** The server's assistant texts of the session, oldest first. */
async function serverTexts() {
  const messages = await oc.json(`/session/${session.id}/message`);
  return messages
    .filter((m) => m.info.role === 'assistant')
    .map((m) => m.parts.filter((p) => p.type === 'text' && !p.synthetic).map((p) => p.text ?? '').join(''));
}

/** The UI's assistant texts, oldest first. */
async function uiTexts() {
  return page.locator('[data-testid="message-assistant"]').allInnerTexts();
}

async function busyCount() {
  return page.locator('[data-testid="session-status"][data-status="busy"]').count();
}

before(async () => {
  stack = await startStack({
    before: async ({ oc }) => {
      session = await oc.json('/session', { method: 'POST', body: { title: TITLE } });
    },
  });
  ({ ms, oc, cc, browser, page } = stack);
});

after(() => stack?.stop());

test('OpenCode killed (SIGKILL) and restarted while a reply streams: the UI is back in sync', async () => {
  await page.goto(cc.url);
  const item = page.locator('[data-testid="session-item"]').filter({ hasText: TITLE });
  await item.first().waitFor({ state: 'visible', timeout: UI_TIMEOUT });
  await item.first().click();

  // A reply in four slow pieces: the kill lands after the first one is on screen.
  const cut = words('cut', 40);
  ms.script([{ text: cut, chunkDelayMs: 2500 }]);
  const input = page.locator('[data-testid="composer-input"]');
  await input.waitFor({ state: 'visible', timeout: UI_TIMEOUT });
  await input.fill('Stream something long');
  await input.press('Enter');
  await until(async () => tokens((await uiTexts()).join(' '), 'cut').length > 0, 'the first streamed piece', UI_TIMEOUT);

  const pid = oc.pid;
  signalChild(pid, 'SIGKILL');
  await until(async () => !isAlive(pid), 'OpenCode to die', 10_000);
  await sleep(200);
  ms.reset();
  await oc.restart();
  const back = Date.now();

  // Back in sync: ready, nothing busy, and every assistant text exactly the server's.
  let synced = null;
  await until(async () => {
    const state = await page.locator('[data-testid="server-status"]').getAttribute('data-state');
    if (state !== 'ready' || (await busyCount()) > 0) return false;
    const server = await serverTexts();
    const ui = await uiTexts();
    if (server.length !== ui.length) return false;
    const same = server.every((text, i) => tokens(ui[i], 'cut').join(' ') === tokens(text, 'cut').join(' '));
    if (same) synced = { server, ui };
    return same;
  }, 'the UI back in sync with the restarted server', 60_000);
  const syncMs = Date.now() - back;
  console.log(`UI back in sync ${syncMs} ms after OpenCode was up again (server kept ${tokens(synced.server.join(' '), 'cut').length} of 40 words)`);
  for (const text of synced.ui) {
    const seen = tokens(text, 'cut');
    assert.equal(new Set(seen).size, seen.length, `no doubled words: ${text}`);
  }

  // The next reply streams in exactly as the server has it.
  const next = words('next', 30);
  ms.script([{ text: next, chunkDelayMs: 400 }]);
  await input.fill('And now the whole thing');
  await input.press('Enter');
  await until(async () => {
    const ui = await uiTexts();
    return ui.length > 0 && tokens(ui[ui.length - 1], 'next').length === 30 && (await busyCount()) === 0;
  }, 'the next reply in full', 30_000);
  const server = await serverTexts();
  const ui = await uiTexts();
  assert.equal(tokens(ui[ui.length - 1], 'next').join(' '), next);
  assert.equal(server[server.length - 1], next);
  assert.equal(await busyCount(), 0);
  const statuses = await oc.json('/session/status');
  assert.equal(statuses[session.id], undefined, 'the server agrees nothing runs');
});

test('after an OpenCode restart the sidebar lists every session: past 100, and in another folder', async () => {
  const bulk = 110;
  for (let i = 0; i < bulk; i += 10) {
    await Promise.all(Array.from({ length: Math.min(10, bulk - i) }, (_, k) => oc.json('/session', {
      method: 'POST', body: { title: `Bulk ${String(i + k + 1).padStart(3, '0')}` },
    })));
  }
  const elsewhere = makeTempDir('crosscheck-elsewhere-');
  await oc.json(`/session?directory=${encodeURIComponent(elsewhere)}`, {
    method: 'POST', body: { title: 'Elsewhere notes' },
  });
  await oc.restart();
  await page.locator('[data-testid="server-status"][data-state="ready"]')
    .waitFor({ state: 'attached', timeout: 60_000 });
  const search = page.locator('[data-testid="session-search"]');
  for (const title of ['Bulk 001', 'Bulk 110', 'Elsewhere notes']) {
    await search.fill(title);
    await page.locator('[data-testid="session-item"]').filter({ hasText: title }).first()
      .waitFor({ state: 'visible', timeout: 30_000 });
  }
  // Every session once: the first one, the 110 and the one elsewhere.
  const stats = await (await fetch(`${cc.base}/api/stats`, { headers: { authorization: `Bearer ${cc.token}` } })).json();
  assert.equal(stats.sessions, bulk + 2);
  await search.fill('');
});

test('sessions created while another Crosscheck attaches are all listed by it, in this folder and another', async () => {
  const elsewhere = makeTempDir('crosscheck-attach-');
  const made = [];
  // A create the server itself refused is not the subject here: counted and shown, not fatal.
  const refused = [];
  let creating = true;
  const creator = async (k) => {
    for (let i = 0; creating; i++) {
      const where = (i + k) % 4 === 0 ? `?directory=${encodeURIComponent(elsewhere)}` : '';
      try {
        const s = await oc.json(`/session${where}`, { method: 'POST', body: { title: `Attach race ${k}.${i}` } });
        made.push({ id: s.id, created: s.time?.created, away: where !== '' });
      } catch (err) {
        refused.push(err.message);
        await sleep(50);
      }
    }
  };
  const creators = Promise.all([0, 1, 2].map(creator));
  const late = await startCrosscheck({ opencodeUrl: oc.url });
  try {
    await until(async () => (await late.api({ cmd: 'snapshot' })).connection.state === 'ready', 'the second process to be ready', 60_000)
      .catch((err) => {
        err.message += `\n${late.output().slice(-3000)}`;
        throw err;
      });
    const readyAt = Date.now();
    const beforeReady = made.length;
    // A slow machine makes few sessions while the process attaches: the creators go on past
    // ready until there are a dozen (those come by events), and at least one came before.
    await sleep(300);
    await until(() => (made.length >= 12 ? true : null), 'a dozen sessions made', 60_000)
      .catch((err) => {
        err.message += ` (${made.length} made; refused: ${refused.slice(0, 3).join(' | ')})`;
        throw err;
      });
    creating = false;
    await creators;
    const away = made.filter((s) => s.away).length;
    console.log(`${made.length} sessions made, ${beforeReady} of them while it attached, ${away} in the other folder, ${refused.length} creates refused by OpenCode`);
    assert.ok(beforeReady > 0, `no session was made while it attached; refused: ${refused.slice(0, 3).join(' | ')}`);
    const missing = async () => {
      const listed = new Set((await late.api({ cmd: 'snapshot' })).sessions.map((s) => s.id));
      return made.filter((s) => !listed.has(s.id));
    };
    await until(async () => (await missing()).length === 0, 'every session made meanwhile to be listed', 10_000)
      .catch(async (err) => {
        const gone = await missing();
        const snap = await late.api({ cmd: 'snapshot' });
        const server = new Set((await oc.json('/experimental/session?archived=true&limit=2000')).map((s) => s.id));
        const described = gone.slice(0, 5).map((s) => `${s.id} (${s.away ? 'other folder' : 'this folder'}, created ${s.created}, ${server.has(s.id) ? 'listed' : 'not listed'} by OpenCode)`);
        err.message += `: ${gone.length} of ${made.length} missing, e.g. ${described.join('; ')}; ready at ${readyAt}; the process is ${snap.connection.state}`
          + `, lists ${snap.sessions.length}\n${late.output().slice(-3000)}`;
        throw err;
      });
  } finally {
    creating = false;
    await creators.catch(() => {});
    await late.stop();
  }
});
