// Benchmark: the "Needs you" list and the sidebar under load, in headless Chromium against
// `crosscheck serve`, a real `opencode serve` and the scripted model server. Figures only;
// nothing is asserted. Prints, each with its target:
//
// - sidebar while 10 of 50 listed sessions stream at once: the longest main-thread task of the
//   page (Chromium trace, wall and CPU) and the long tasks the page observed (target: no task
//   over 50 ms of CPU; the wall-time verdict is printed beside it);
// - an attention item: the permission request's event reaching the backend (this bench hears
//   the same server event on its own stream) -> its row painted in the list (target p95 <= 16 ms);
// - the list with 100 items: the page loaded with 100 permission requests waiting, from the
//   last Api answer to the list painted, against the same page and sessions with none waiting
//   (the baseline, same run): the list's own share (target <= 16 ms).
//
//   node bench/attention.bench.mjs [items] [latency-samples]
//   (CROSSCHECK_BIN = the release `crosscheck` binary; after `make ui`)
import { launchBrowser } from '../support/browser.mjs';
import { cleanupAll } from '../support/cleanup.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { subscribeEvents } from '../support/events.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';

const ITEMS = Number(process.argv[2] ?? 100);
const SAMPLES = Number(process.argv[3] ?? 20);
const LISTED = 50;
const STREAMING = 10;
const ASK_BASH = [{ permission: 'bash', pattern: '*', action: 'ask' }];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const verdict = (ok) => (ok ? 'met' : 'NOT MET');
const now = () => performance.timeOrigin + performance.now();

function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  return { p50: at(0.5), p95: at(0.95), max: s.at(-1) ?? NaN, n: s.length };
}
const fmt = ({ p50, p95, max, n }) => `p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, max ${max.toFixed(1)} ms (n=${n})`;

/** Records, in the page, when each Needs-you row is first painted (epoch ms) and long tasks. */
function pageProbe() {
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: 'longtask', buffered: true });
  window.__itemPainted = {};
  window.__listPainted = [];
  /** The first painted frame whose list held at least `n` items. */
  window.__listAt = (n) => window.__listPainted.find((p) => p.size >= n);
  const painted = () => new Promise((r) => requestAnimationFrame(() => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => r(performance.now());
    ch.port2.postMessage(0);
  }));
  const seen = new Set();
  const obs = new MutationObserver(() => {
    const rows = document.querySelectorAll('[data-testid="needs-you-item"]');
    let fresh = false;
    for (const row of rows) {
      const key = `${row.dataset.sessionId}:${row.dataset.kind}`;
      if (!seen.has(key)) { seen.add(key); fresh = true; row.__key = key; }
    }
    if (fresh) {
      const keys = [...rows].map((r) => r.__key).filter((k) => k && window.__itemPainted[k] === undefined);
      const size = rows.length;
      painted().then((t) => {
        for (const k of keys) if (window.__itemPainted[k] === undefined) window.__itemPainted[k] = performance.timeOrigin + t;
        window.__listPainted.push({ size, t });
      });
    }
    if (window.__rowsPainted === undefined && document.querySelector('[data-testid="session-item"]')) {
      window.__rowsPainted = null;
      painted().then((t) => { window.__rowsPainted = t; });
    }
  });
  document.addEventListener('DOMContentLoaded', () => obs.observe(document.body, { childList: true, subtree: true }));
}

let exitCode = 0;
try {
  const ms = await startModelServer();
  const oc = await startOpencode({ modelUrl: ms.url });
  const events = await subscribeEvents(oc.url);
  const listed = [];
  for (let i = 0; i < LISTED; i++) {
    listed.push(await oc.json('/session', { method: 'POST', body: { title: `Listed session ${String(i).padStart(2, '0')}` } }));
  }
  const cc = await startCrosscheck({ opencodeUrl: oc.url });
  const browser = await launchBrowser();
  const context = await browser.browser.newContext({ viewport: { width: 1280, height: 860 } });
  await context.addInitScript(pageProbe);
  let page = await context.newPage();
  await page.goto(cc.url);
  await page.waitForFunction(() => typeof window.__rowsPainted === 'number', null, { timeout: 60_000 });
  await sleep(1500);

  // --- 10 sessions streaming at once, 50 listed ------------------------------------------------
  const idleCount = () => events.events.filter((e) => e.type === 'session.idle').length;
  const words = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
  const startedAt = await page.evaluate(() => performance.now());
  await browser.browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline'] });
  const idleBefore = idleCount();
  ms.script(Array.from({ length: STREAMING }, () => ({ text: words, chunks: 200, chunkDelayMs: 25 })));
  await Promise.all(listed.slice(0, STREAMING).map((s) => oc.fetch(`/session/${s.id}/prompt_async`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ parts: [{ type: 'text', text: 'Stream a long answer.' }] }),
  }).then((r) => r.text())));
  const deadline = Date.now() + 120_000;
  while (idleCount() < idleBefore + STREAMING && Date.now() < deadline) await sleep(100);
  await sleep(500);
  const trace = JSON.parse(String(await browser.browser.stopTracing()));
  const longTasks = (await page.evaluate(() => window.__longTasks)).filter((t) => t.start >= startedAt);
  const traceEvents = trace.traceEvents ?? trace;
  const main = new Set(traceEvents.filter((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`));
  let wall = 0;
  let cpu = 0;
  let tasks = 0;
  for (const e of traceEvents) {
    if (e.name !== 'RunTask' || e.ph !== 'X' || !main.has(`${e.pid}:${e.tid}`)) continue;
    tasks += 1;
    wall = Math.max(wall, (e.dur ?? 0) / 1000);
    cpu = Math.max(cpu, (e.tdur ?? 0) / 1000);
  }
  const longest = longTasks.reduce((m, t) => Math.max(m, t.duration), 0);
  console.log(
    `attention streaming (${STREAMING} sessions streaming 200 chunks each, ${LISTED} listed): longest main-thread task ${wall.toFixed(1)} ms wall / ${cpu.toFixed(1)} ms CPU ` +
      `of ${tasks} tasks; long tasks observed ${longTasks.length}${longTasks.length ? ` (longest ${longest.toFixed(0)} ms)` : ''} ` +
      // The target is the task's CPU time (the issue's words); wall time also counts the
      // moments the page's thread was not scheduled on a busy machine, so it is printed beside.
      `(target: none over 50 ms of CPU: ${verdict(cpu <= 50)}; in wall time: ${verdict(wall <= 50 && longTasks.length === 0)})`,
  );

  // The streamed sessions' finished turns are unread items: seen, so the baseline has none.
  await cc.api({ cmd: 'seeSessions', sessionIds: listed.slice(0, STREAMING).map((s) => s.id) });

  // --- the sessions that will ask, and the page without any item (the baseline) ------------
  const askers = [];
  for (let i = 0; i < ITEMS; i++) {
    askers.push(await oc.json('/session', { method: 'POST', body: { title: `Asks ${String(i).padStart(3, '0')}`, permission: ASK_BASH } }));
  }
  /** Loads the app afresh; answers ms from the last Api answer before the paint to the paint. */
  async function load(wantItems) {
    await page.close();
    page = await context.newPage();
    await page.goto(cc.url);
    await page.waitForFunction((n) => (n ? window.__listAt(n) : typeof window.__rowsPainted === 'number'), wantItems, { timeout: 60_000 });
    return page.evaluate((n) => {
      const at = n ? window.__listAt(n).t : window.__rowsPainted;
      const api = performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/api') && e.responseEnd <= at);
      const items = document.querySelectorAll('[data-testid="needs-you-item"]').length;
      return { fromApi: at - Math.max(0, ...api.map((e) => e.responseEnd)), fromStart: at, items };
    }, wantItems);
  }
  const empty = [];
  for (let i = 0; i < 5; i++) empty.push(await load(0));
  await sleep(1000);

  // --- one item at a time: event at the backend -> row painted -----------------------------
  const latencies = [];
  async function ask(session) {
    const from = events.events.length;
    ms.script([{ tool: 'bash', args: { command: `echo ${session.id}`, description: session.title } }]);
    await oc.fetch(`/session/${session.id}/prompt_async`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ parts: [{ type: 'text', text: 'Run a command.' }] }),
    }).then((r) => r.text());
    await events.waitFor((e) => e.type === 'permission.asked' && e.properties.sessionID === session.id, { from, timeoutMs: 60_000, what: 'the permission' });
    return now();
  }
  for (const session of askers.slice(0, SAMPLES)) {
    const heard = await ask(session);
    const key = `${session.id}:permission`;
    const painted = await page.waitForFunction((k) => window.__itemPainted[k], key, { timeout: 60_000 }).then((h) => h.jsonValue());
    latencies.push(painted - heard);
    await sleep(200);
  }
  const lat = stats(latencies);
  console.log(`attention item: permission event at the backend -> its row painted in Needs you: ${fmt(lat)} (target p95 <= 16 ms: ${verdict(lat.p95 <= 16)})`);

  // --- the rest, ten at a time; then the page loaded with them all ---------------------------
  for (let i = SAMPLES; i < ITEMS; i += 10) await Promise.all(askers.slice(i, i + 10).map(ask));
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="needs-you-item"]').length >= n, ITEMS, { timeout: 60_000 });
  const full = [];
  for (let i = 0; i < 5; i++) full.push(await load(ITEMS));
  if (empty.some((x) => x.items > 0)) console.log(`attention: the baseline page listed ${empty.map((x) => x.items).join(', ')} items`);
  const e = stats(empty.map((x) => x.fromApi));
  const f = stats(full.map((x) => x.fromApi));
  const share = f.p50 - e.p50;
  console.log(
    `attention list of ${full[0].items} items: last Api answer -> painted ${fmt(f)}; the same page with no item (baseline) ${fmt(e)}; ` +
      `the list's own share (p50) ${share.toFixed(1)} ms (target <= 16 ms: ${verdict(share <= 16)}); ` +
      `navigation start -> painted p50 ${stats(full.map((x) => x.fromStart)).p50.toFixed(0)} ms vs ${stats(empty.map((x) => x.fromStart)).p50.toFixed(0)} ms`,
  );
  events.close();
  await context.close();
  await browser.close();
  await cc.stop();
  await oc.dispose();
  await ms.close();
} catch (err) {
  console.error(`attention bench failed: ${err.stack ?? err}`);
  exitCode = 1;
} finally {
  await cleanupAll();
}
process.exit(exitCode);
