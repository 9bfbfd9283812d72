// Benchmark: the desktop app's memory (PSS, summed over the app and its WebKit processes from
// /proc/<pid>/smaps_rollup) against the real `opencode serve` with 50 sessions, one of them a
// 5,000-message transcript (about 750 bytes a message). Two figures: the empty app (connected,
// sessions listed, none open) and that transcript opened and scrolled to the top until every
// older page is loaded; and their ratio (target <= 1.3x), with where each process grew (by
// mapping: `[anon]` holds WebKit's JavaScript and DOM heaps). Figures only; nothing is asserted.
//
//   xvfb-run -a node bench/desktop-memory.bench.mjs   (after `make desktop`, or with
//   CROSSCHECK_DESKTOP_BIN naming a release build of crosscheck-desktop --features custom-protocol)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { makeTempDir } from '../support/cleanup.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { OFFLINE_ENV, freePort, opencodeBin, startOpencode } from '../support/opencode.mjs';
import { childrenOf, commandLine } from '../support/procs.mjs';
import { newSession, startTauriDriver, tauriCapabilities } from '../support/webdriver.mjs';

const MESSAGES = Number(process.argv[2] ?? 5000);
const SESSIONS = 50;
const BIG_TITLE = 'Memory bench transcript';
const target = process.env.CARGO_TARGET_DIR ?? path.join(process.env.HOME ?? '', '.cache', 'crosscheck', 'target');
const bin = path.resolve(process.env.CROSSCHECK_DESKTOP_BIN ?? path.join(target, 'release', 'crosscheck-desktop'));

if (!process.env.DISPLAY) throw new Error('no DISPLAY: run under xvfb-run -a');
if (!fs.existsSync(bin)) throw new Error(`desktop binary not found at ${bin} (CROSSCHECK_DESKTOP_BIN, or build crosscheck-desktop --features custom-protocol)`);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A time-ordered id like OpenCode's: prefix, 12 hex digits, 14 more characters. */
function makeId(prefix, n) {
  return `${prefix}_${(0x2321ed2f1000 + n).toString(16).padStart(12, '0')}${'bench'.padEnd(14, '0')}`;
}

/** About 750 bytes of markdown: prose, a list and a short code block. */
function replyText(i) {
  return (
    `Step ${i}: the store keeps one copy of each message and the list renders only what is on screen.\n\n` +
    `- the **first** point about page ${i}\n- the second point, with \`code\`\n\n` +
    '```ts\n' +
    Array.from({ length: 6 }, (_, k) => `const row${k} = offsets[${k}] + (heights.get(keys[${k}]) ?? estimate);`).join('\n') +
    '\n```\n\nThat is all for this step; the next one continues where this left off.'
  );
}

/** The JSON `opencode import` reads: one session of `n` messages, user and assistant in turn. */
function bigSession(directory, n) {
  const sessionID = makeId('ses', 0);
  const t0 = Date.now() - n * 1000;
  const messages = [];
  let parentID;
  for (let i = 0; i < n; i += 1) {
    const id = makeId('msg', i + 1);
    const created = t0 + i * 1000;
    const user = i % 2 === 0;
    const info = user
      ? { id, sessionID, role: 'user', time: { created }, agent: 'build', model: { providerID: 'fake', modelID: 'fake-model' } }
      : {
          id, sessionID, parentID, role: 'assistant', mode: 'build', agent: 'build', path: { cwd: directory, root: '/' },
          cost: 0, tokens: { total: 30, input: 20, output: 10, reasoning: 0, cache: { write: 0, read: 0 } },
          modelID: 'fake-model', providerID: 'fake', time: { created, completed: created + 500 }, finish: 'stop',
        };
    if (user) parentID = id;
    const text = user ? `Question ${i}: what does step ${i} change, and why is it safe? ${'Context. '.repeat(60)}` : replyText(i);
    messages.push({ info, parts: [{ id: makeId('prt', i + 1), sessionID, messageID: id, type: 'text', text }] });
  }
  const info = {
    id: sessionID, slug: 'memory-bench', projectID: 'global', directory, title: BIG_TITLE, version: '1.18.33',
    time: { created: t0, updated: t0 + n * 1000 },
  };
  return { info, messages };
}

/** PSS and private memory (USS: what only this process maps) in kB of a process; zeros when
 * it is gone. PSS shares a library's pages among every process that maps them, so it moves when
 * other WebKit processes run on the machine; USS does not. */
function memoryOf(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
    return { pss: field('Pss'), uss: field('Private_Clean') + field('Private_Dirty') };
  } catch {
    return { pss: 0, uss: 0 };
  }
}

/** A process and all its descendants. */
function tree(pid) {
  const out = [pid];
  for (const child of childrenOf(pid)) out.push(...tree(child));
  return out;
}

/** The app's process: the one running `bin` under tauri-driver. */
function appPid(driverPid) {
  const real = fs.realpathSync(bin);
  const found = tree(driverPid).find((pid) => {
    try {
      return fs.realpathSync(`/proc/${pid}/exe`) === real;
    } catch {
      return false;
    }
  });
  if (!found) throw new Error('the desktop app process was not found under tauri-driver');
  return found;
}

/** PSS (and USS) of the app and its WebKit processes, in MB, with the parts. */
function appMemory(pid) {
  const parts = tree(pid).map((p) => ({ pid: p, name: path.basename(commandLine(p).split(' ')[0] ?? ''), ...memoryOf(p) }));
  return { mb: parts.reduce((n, p) => n + p.pss, 0) / 1024, uss: parts.reduce((n, p) => n + p.uss, 0) / 1024, parts };
}

/** Waits until memory stops moving (two reads 1 s apart within 1 %), at most `ms`. */
async function settledMemory(pid, ms = 15_000) {
  const deadline = Date.now() + ms;
  let last = appMemory(pid);
  for (;;) {
    await sleep(1000);
    const now = appMemory(pid);
    if (Math.abs(now.mb - last.mb) <= last.mb * 0.01 || Date.now() > deadline) return now;
    last = now;
  }
}

/** PSS in kB of a process by mapping (a file's name, or `[anon]`, `[heap]`, ...): where it grew.
 * WebKit's JavaScript and DOM heaps are anonymous mappings; `[heap]` is the C allocator's. */
function pssByMapping(pid) {
  const out = new Map();
  let name = '';
  try {
    for (const line of fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
      const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
      if (head) {
        name = head[1] ? (head[1].startsWith('/') ? path.basename(head[1]) : head[1]) : '[anon]';
        continue;
      }
      const pss = /^Pss:\s+(\d+) kB/.exec(line);
      if (pss) out.set(name, (out.get(name) ?? 0) + Number(pss[1]));
    }
  } catch {
    // gone
  }
  return out;
}

/** The mappings that grew or shrank by more than 0.5 MB between two reads, largest first. */
function mappingGrowth(before, after) {
  const names = new Set([...before.keys(), ...after.keys()]);
  const moved = [...names]
    .map((n) => [n, ((after.get(n) ?? 0) - (before.get(n) ?? 0)) / 1024])
    .filter(([, mb]) => Math.abs(mb) > 0.5)
    .sort((a, b) => b[1] - a[1]);
  return moved.length === 0 ? 'none' : moved.map(([n, mb]) => `${n} ${mb > 0 ? '+' : ''}${mb.toFixed(1)}`).join(', ');
}

const describe = (m) =>
  `${m.mb.toFixed(1)} MB (${m.parts.map((p) => `${p.name} ${(p.pss / 1024).toFixed(1)}`).join(', ')}; USS ${m.uss.toFixed(1)} MB)`;

const started = Date.now();
const ms = await startModelServer();
const oc = await startOpencode({ modelUrl: ms.url, password: 'bench-secret' });
let driver;
let wd;
try {
  for (let i = 1; i < SESSIONS; i += 1) await oc.json('/session', { method: 'POST', body: { title: `Bench session ${i}` } });
  // The long transcript goes in through `opencode import` (writing 5,000 messages through the
  // model would take many minutes), with the server's own folders and config.
  const file = path.join(oc.root, 'big-session.json');
  const big = bigSession(fs.realpathSync(oc.projectDir), MESSAGES);
  fs.writeFileSync(file, JSON.stringify(big));
  const bytes = big.messages.reduce((n, m) => n + m.parts[0].text.length, 0);
  const env = {
    PATH: process.env.PATH, LANG: 'C.UTF-8', TZ: 'UTC',
    HOME: path.join(oc.root, 'home'), XDG_CONFIG_HOME: path.join(oc.root, 'config'), XDG_DATA_HOME: path.join(oc.root, 'data'),
    XDG_CACHE_HOME: path.join(oc.root, 'cache'), XDG_STATE_HOME: path.join(oc.root, 'state'),
    ...OFFLINE_ENV, OPENCODE_CONFIG: oc.configPath,
  };
  const imported = spawnSync(opencodeBin(), ['import', file], { cwd: oc.projectDir, env, encoding: 'utf8', timeout: 300_000 });
  if (imported.status !== 0) throw new Error(`opencode import failed (${imported.status}): ${imported.stderr.slice(-2000)}`);
  const listed = await oc.json('/session');
  if (!listed.some((s) => s.title === BIG_TITLE)) throw new Error('the imported session is not listed by the server');
  console.log(`desktop memory: ${listed.length} sessions, one of ${MESSAGES} messages (${(bytes / 1e6).toFixed(2)} MB of text); set up in ${((Date.now() - started) / 1000).toFixed(0)} s`);

  const appDir = makeTempDir('crosscheck-desktop-memory-');
  driver = await startTauriDriver({
    port: await freePort(),
    nativePort: await freePort(),
    env: {
      CROSSCHECK_OPENCODE_URL: oc.url,
      OPENCODE_SERVER_PASSWORD: 'bench-secret',
      CROSSCHECK_DATA_DIR: path.join(appDir, 'data'),
      CROSSCHECK_CONFIG_DIR: path.join(appDir, 'config'),
    },
  });
  wd = await newSession(tauriCapabilities(bin), { url: driver.url });
  const until = async (script, what, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await wd.executeScript(script);
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await sleep(200);
    }
  };
  const item = `[...document.querySelectorAll('[data-testid="session-item"]')].find((e) => e.textContent.includes(${JSON.stringify(BIG_TITLE)}))`;
  await until(`return !!${item}`, 'the sessions in the sidebar');
  const pid = appPid(driver.pid);
  const empty = await settledMemory(pid);
  const mappingsEmpty = new Map(empty.parts.map((p) => [p.pid, pssByMapping(p.pid)]));
  console.log(`desktop memory: empty app (connected, ${listed.length} sessions listed, none open): PSS ${describe(empty)}`);

  await wd.executeScript(`${item}.querySelector('button.main').click()`);
  await until(`return document.querySelectorAll('[data-testid="message-list"] .row').length > 0`, 'the transcript');
  const opened = await settledMemory(pid, 5000);
  // What rows that leave the window still hold once the UI has let go of them: a detached tree
  // stays alive (garbage) while any of its nodes has a JavaScript wrapper, until WebKit's
  // collector runs. Counted as they leave (the observer sees them after the UI's teardown);
  // counting wraps only each row (which the UI had wrapped already) and its markdown blocks
  // (emptied by then), not the elements counted.
  await wd.executeScript(`
    const left = (window.__rowsLeft = { rows: 0, elements: 0, markdown: 0 });
    new MutationObserver((records) => {
      for (const r of records) for (const n of r.removedNodes) {
        if (n.nodeType !== 1) continue;
        left.rows += 1;
        left.elements += n.getElementsByTagName('*').length;
        for (const md of n.getElementsByClassName('md')) left.markdown += md.getElementsByTagName('*').length;
      }
    }).observe(document.querySelector('[data-testid="message-list"] .window'), { childList: true });`);
  // Scroll to the top until the first message is on screen and no page is loading.
  const first = JSON.stringify(big.messages[0].info.id);
  const t0 = Date.now();
  let pages = 0;
  for (;;) {
    const state = await wd.executeScript(`
      const s = document.querySelector('[data-testid="message-list"] .scroller');
      if (s) s.scrollTop = 0;
      const loading = !!document.querySelector('[data-testid="message-list"] .older');
      const top = !!document.querySelector('[data-testid="message-list"] [data-message-id=${first}]');
      return { loading, top };`);
    if (state.top && !state.loading) break;
    if (Date.now() - t0 > 600_000) throw new Error('the transcript did not reach its first message in 10 minutes');
    pages += 1;
    await sleep(150);
  }
  const scrolled = (Date.now() - t0) / 1000;
  const full = await settledMemory(pid);
  const left = await wd.executeScript('return window.__rowsLeft');
  const growth = full.parts
    .map((p) => `${p.name} ${mappingGrowth(mappingsEmpty.get(p.pid) ?? new Map(), pssByMapping(p.pid))}`)
    .join('; ');
  console.log(`desktop memory: transcript opened (newest page): PSS ${describe(opened)}`);
  console.log(`desktop memory: transcript scrolled to the top in ${scrolled.toFixed(1)} s (${pages} scroll steps): PSS ${describe(full)}`);
  console.log(`desktop memory: growth from the empty app by mapping (MB): ${growth}`);
  console.log(
    `desktop memory: ${left.rows} rows left the transcript's window during the scroll, holding ${left.elements} elements ` +
      `when they left (${left.markdown} of them rendered markdown)`,
  );
  console.log(
    `desktop memory: empty app ${empty.mb.toFixed(1)} MB, ${MESSAGES}-message transcript fully loaded ${full.mb.toFixed(1)} MB, ` +
      `ratio ${(full.mb / empty.mb).toFixed(2)}x (target <= 1.3x; opened at the newest page ${(opened.mb / empty.mb).toFixed(2)}x; ` +
      `USS ${empty.uss.toFixed(1)} -> ${full.uss.toFixed(1)} MB, ${(full.uss / empty.uss).toFixed(2)}x)`,
  );
} finally {
  await wd?.deleteSession().catch(() => {});
  await driver?.stop();
  await oc.dispose();
  await ms.close();
}
process.exit(0);
