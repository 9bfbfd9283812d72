// Benchmark: several OpenCode servers in one `crosscheck serve`, against three real
// `opencode serve` processes of 300 sessions each (seeded through their HTTP API) and the
// scripted model server. Figures only; nothing is asserted. Prints, each with its target:
//
// - memory and idle CPU: PSS (/proc/PID/smaps_rollup) and CPU (/proc/PID/stat over a quiet
//   window) of `crosscheck serve` with 3 servers, and, in the same run, with 1 server (the
//   baseline): target <= 1.5x the PSS of one server, idle CPU < 0.5 % of a core;
// - a restart: one server stopped and started again while the two others stream (a reply of
//   many chunks each): how long after it is healthy Crosscheck lists a session made on it right
//   then (back in sync), and how much later Crosscheck forwards the other servers' streamed
//   text than they send it, during the restart against before it (target: p95 of the extra
//   delay <= 5 ms);
// - in Chromium: first paint of the sidebar with the 900 sessions (navigation start -> the
//   three servers' rows painted, target <= 150 ms) and a search keystroke (key down -> the
//   filtered list painted, target <= 16 ms).
//
//   node bench/servers.bench.mjs [sessions-per-server] [quiet-seconds] [phase]
//   (CROSSCHECK_BIN = the release `crosscheck` binary; after `make ui`). `phase`: `all` (the
//   default) or `sidebar` (only the Chromium figures, to iterate on the UI).
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { launchBrowser } from '../support/browser.mjs';
import { cleanupAll } from '../support/cleanup.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { openSettledTab } from './settled-tab.mjs';
import { sseFrames, subscribeEvents } from '../support/events.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';
import { pssKb, quietCpu } from './proc-figures.mjs';

const PER_SERVER = Number(process.argv[2] ?? 300);
const QUIET_S = Number(process.argv[3] ?? 20);
const PHASE = process.argv[4] ?? 'all';
if (!['all', 'sidebar'].includes(PHASE)) throw new Error(`unknown phase ${PHASE}: all or sidebar`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const verdict = (ok) => (ok ? 'met' : 'NOT MET');
/** What the page's probe logs once the sidebar's first frame has painted. */
const PAINTED = 'crosscheck-bench: sidebar painted';
/** The script that gives the page `window.__afterFrame` (the "painted" stamp). */
const AFTER_FRAME = fileURLToPath(new URL('./after-frame.js', import.meta.url));
/** Page loads for the sidebar's figures. */
const LOADS = 9;
/** Loads before them, printed and not counted: the browser's and the server's first ones. */
const WARMUP = 2;

function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  return { p50: at(0.5), p95: at(0.95), max: s.at(-1) ?? NaN, n: s.length };
}
const fmt = ({ p50, p95, max, n }) => `p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, max ${max.toFixed(1)} ms (n=${n})`;

/** Creates `n` sessions on a server, 16 requests at a time. */
async function seed(oc, n, label) {
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      await oc.json('/session', { method: 'POST', body: { title: `${label} session ${String(i).padStart(3, '0')}` } });
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

/** Follows Crosscheck's change stream; `on(change, at)` for every change. */
async function followCrosscheck(cc, on) {
  const ac = new AbortController();
  const res = await fetch(`${cc.base}/api/events`, { headers: { authorization: `Bearer ${cc.token}` }, signal: ac.signal });
  if (!res.ok) throw new Error(`/api/events -> ${res.status}`);
  (async () => {
    try {
      for await (const batch of sseFrames(res.body)) {
        const at = performance.now();
        for (const stamped of Array.isArray(batch) ? batch : []) on(stamped.change ?? stamped, at);
      }
    } catch { /* closed */ }
  })();
  return () => ac.abort();
}

async function waitUntil(check, what, timeoutMs = 120_000, everyMs = 50) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

async function statsOf(cc) {
  const res = await fetch(`${cc.base}/api/stats`, { headers: { authorization: `Bearer ${cc.token}` } });
  return res.json();
}

/** Starts Crosscheck on `servers`, waits until every one lists its sessions. */
async function crosscheckOn(servers) {
  const [first, ...rest] = servers;
  const cc = await startCrosscheck({ opencodeUrl: first.url, args: rest.flatMap((s) => ['--opencode', s.url]), uiDir: false });
  await waitUntil(async () => {
    const st = await statsOf(cc);
    const counts = Object.values(st.servers ?? {}).map((s) => s.sessions);
    return counts.length === servers.length && counts.every((c) => c >= PER_SERVER);
  }, `crosscheck to list ${servers.length} x ${PER_SERVER} sessions`, 180_000, 200);
  return cc;
}

/** PSS after settling, and CPU over a quiet window, of a crosscheck process. */
async function idleFigures(cc) {
  await sleep(3000);
  const cpu = await quietCpu(cc.pid, QUIET_S * 1000);
  return { pss: pssKb(cc.pid), cpu };
}

let exitCode = 0;
try {
  const t0 = Date.now();
  const ms = await startModelServer();
  const servers = await Promise.all([0, 1, 2].map(() => startOpencode({ modelUrl: ms.url })));
  await Promise.all(servers.map((s, i) => seed(s, PER_SERVER, `Server ${'ABC'[i]}`)));
  console.log(`servers: seeded 3 x ${PER_SERVER} sessions in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  if (PHASE === 'all') {
    // --- memory and idle CPU: one server (baseline), then three --------------------------------
    const one = await crosscheckOn(servers.slice(0, 1));
    const base = await idleFigures(one);
    await one.stop();
    const cc = await crosscheckOn(servers);
    const three = await idleFigures(cc);
    const ratio = three.pss / base.pss;
    console.log(
      `servers memory: crosscheck serve PSS with 3 servers x ${PER_SERVER} sessions ${(three.pss / 1024).toFixed(1)} MB, ` +
        `1 server x ${PER_SERVER} (baseline, same run) ${(base.pss / 1024).toFixed(1)} MB: ${ratio.toFixed(2)}x ` +
        `(target <= 1.5x: ${verdict(ratio <= 1.5)})`,
    );
    console.log(
      `servers idle CPU over ${QUIET_S} s: 3 servers ${three.cpu.toFixed(2)} % of a core, 1 server ${base.cpu.toFixed(2)} % ` +
        `(target < 0.5 %: ${verdict(three.cpu < 0.5)})`,
    );

    // --- a restart while the two others stream -----------------------------------------------
    const [a, b, c] = servers;
    const snapshot = await cc.api({ cmd: 'snapshot' });
    const serverIdOf = (url) => snapshot.servers.find((s) => (s.url ?? s.connection?.url ?? '').replace(/\/+$/, '') === url)?.id;
    const aId = serverIdOf(a.url);
    if (!aId) throw new Error(`no server id for ${a.url} in ${JSON.stringify(snapshot.servers.map((s) => s.url))}`);
    const streaming = [];
    for (const s of [b, c]) {
      const session = await s.json('/session', { method: 'POST', body: { title: 'Streaming' } });
      streaming.push({ oc: s, id: session.id });
    }
    // Crosscheck follows the streaming transcripts (as an open session), so it forwards their text.
    await waitUntil(async () => (await statsOf(cc)).sessions >= 3 * PER_SERVER + 2, 'the streaming sessions listed');
    for (const st of streaming) await cc.api({ cmd: 'openSession', sessionId: st.id });

    // Cumulative text length per part: when each server sent it, when Crosscheck forwarded it.
    const sent = new Map(); // partId -> [{len, at}]
    const forwarded = new Map(); // partId -> [{len, at}]
    const push = (map, part, len, at) => {
      const list = map.get(part) ?? [];
      list.push({ len: (list.at(-1)?.len ?? 0) + len, at });
      map.set(part, list);
    };
    const direct = [];
    for (const { oc, id } of streaming) {
      const ev = await subscribeEvents(oc.url);
      direct.push(ev);
      const orig = ev.events.push.bind(ev.events);
      ev.events.push = (e) => {
        if (e.type === 'message.part.delta' && e.properties.sessionID === id && e.properties.field === 'text') {
          push(sent, e.properties.partID, e.properties.delta.length, performance.now());
        }
        return orig(e);
      };
    }
    let aReadyAt = null;
    let syncedAt = null;
    let marker = null;
    const stopFollowing = await followCrosscheck(cc, (change, at) => {
      if (change.type === 'partDelta' && change.field === 'text') push(forwarded, change.partId, change.delta.length, at);
      if (change.type === 'server' && change.server?.id === aId && change.server.connection?.state === 'ready' && aReadyAt === null && marker) aReadyAt = at;
      if (marker && syncedAt === null) {
        if (change.type === 'sessionUpserted' && change.session?.id === marker) syncedAt = at;
        if (change.type === 'sessionsReset' && change.sessions?.some((s) => s.id === marker)) syncedAt = at;
      }
    });

    // Each streaming session answers turn after turn (600 chunks, 25 ms apart) until told to stop.
    let streamingOn = true;
    const words = Array.from({ length: 900 }, (_, i) => `word${i}`).join(' ');
    const loops = streaming.map(async ({ oc, id }) => {
      const ev = direct[streaming.findIndex((s) => s.id === id)];
      while (streamingOn) {
        const from = ev.events.length;
        ms.script([{ text: words, chunks: 600, chunkDelayMs: 25 }]);
        await oc.fetch(`/session/${id}/prompt_async`, {
          method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ parts: [{ type: 'text', text: 'Stream a long answer.' }] }),
        }).then((r) => r.text());
        await ev.waitForIdle(id, { from, timeoutMs: 120_000 });
      }
    });

    // The baseline window starts once both streams are flowing through Crosscheck.
    await waitUntil(() => sent.size >= 2 && forwarded.size >= 2, 'both streams flowing', 120_000, 20);
    await sleep(1000);
    const baselineFrom = performance.now();
    await sleep(6000);
    const restartFrom = performance.now();
    await a.stop();
    await sleep(500);
    await a.restart();
    const healthyAt = performance.now();
    marker = (await a.json('/session', { method: 'POST', body: { title: 'Made right after the restart' } })).id;
    await waitUntil(() => syncedAt !== null, 'crosscheck to list the session made after the restart', 120_000, 5);
    await sleep(1000);
    const restartTo = performance.now();
    streamingOn = false;
    stopFollowing();

    /** Delay of each sent piece: the first forward reaching its cumulative length. */
    function delays(from, to) {
      const out = [];
      for (const [part, list] of sent) {
        const fw = forwarded.get(part) ?? [];
        let j = 0;
        for (const { len, at } of list) {
          if (at < from || at > to) continue;
          while (j < fw.length && fw[j].len < len) j++;
          if (j < fw.length) out.push(fw[j].at - at);
        }
      }
      return out;
    }
    const before = stats(delays(baselineFrom, restartFrom));
    const during = stats(delays(restartFrom, restartTo));
    const extra = during.p95 - before.p95;
    console.log(
      `servers restart: back in sync ${(syncedAt - healthyAt).toFixed(0)} ms after the restarted server is healthy ` +
        `(reconnected ${aReadyAt !== null ? `${(aReadyAt - healthyAt).toFixed(0)} ms` : 'unseen'}; stopped for ${((healthyAt - restartFrom) / 1000).toFixed(1)} s)`,
    );
    console.log(`  other servers' streamed text, sent -> forwarded by crosscheck: during the restart ${fmt(during)}; before it ${fmt(before)}`);
    console.log(`  delay added by the restart: p95 ${extra.toFixed(1)} ms (target <= 5 ms: ${verdict(extra <= 5)})`);
    await Promise.race([Promise.all(loops), sleep(30_000)]);
    for (const ev of direct) ev.close();
    await cc.stop();

  }

  // --- the sidebar in Chromium ------------------------------------------------------------
  const [a, b, c] = servers;
  const ui = await startCrosscheck({ opencodeUrl: a.url, args: [b.url, c.url].flatMap((u) => ['--opencode', u]) });
  await waitUntil(async () => Object.values((await statsOf(ui)).servers ?? {}).every((s) => s.sessions >= PER_SERVER), 'the UI crosscheck to list every session', 180_000, 200);
  // The servers may still be busy with the phase before (its streams, titles, collection): the
  // loads start once Crosscheck and the three servers are quiet (each under 5 % of a core over
  // a second), so that the figure is the page's and not the machine's left-over work.
  const quietFrom = performance.now();
  let busiest = Infinity;
  while (busiest >= 5 && performance.now() - quietFrom < 30_000) {
    const used = await Promise.all([ui.pid, ...servers.map((s) => s.pid)].map((pid) => quietCpu(pid, 1000)));
    busiest = Math.max(...used);
  }
  console.log(`servers sidebar: the loads start after ${((performance.now() - quietFrom) / 1000).toFixed(1)} s, the busiest process at ${busiest.toFixed(1)} % of a core`);
  const browser = await launchBrowser();
  const paints = [];
  const keys = [];
  const keysOwn = [];
  const warmup = [];
  for (let run = 0; run < WARMUP + LOADS; run++) {
    const page = await openSettledTab(() => browser.newPage());
    await page.addInitScript({ path: AFTER_FRAME });
    await page.addInitScript((PAINTED) => {
      // The first frame in which the three servers' sections are there and the list's view is
      // filled: every section whose top is inside the list's visible part holds session rows
      // (rows below the view need not be built).
      const viewFilled = () => {
        const list = document.querySelector('[data-testid="session-list"]');
        const sections = [...document.querySelectorAll('[data-testid="server-section"]')];
        if (!list || sections.length < 3 || !sections[0].querySelector('[data-testid="session-item"]')) return false;
        const bottom = list.getBoundingClientRect().bottom;
        return sections.every((s) => s.getBoundingClientRect().top >= bottom || s.querySelector('[data-testid="session-item"]'));
      };
      // Looked for at the start of each frame, where the frame lays the page out anyway: a
      // check on every DOM mutation forced layouts in the middle of the app's mount (30 ms of
      // the probe's own script and its layouts in a profiled load), which the app never does.
      // "Painted" is stamped in the first task after the frame's rendering (after-frame.js).
      const look = () => requestAnimationFrame(() => {
        if (!viewFilled()) return look();
        window.__rowsAt = performance.now();
        window.__afterFrame(() => {
          window.__paintedAt = performance.now();
          console.debug(PAINTED);
        });
      });
      look();
      // The timeline of a load: the app's first DOM, the event stream asked and open, each Api
      // call (its command; times from resource timing).
      window.__marks = {};
      window.__cmds = [];
      const fetch0 = window.fetch.bind(window);
      window.fetch = (url, init) => {
        if (String(url).endsWith('/api')) {
          try { window.__cmds.push(JSON.parse(init?.body ?? '{}').cmd); } catch { window.__cmds.push('?'); }
        }
        return fetch0(url, init);
      };
      const ES = window.EventSource;
      window.EventSource = class extends ES {
        constructor(...args) {
          super(...args);
          window.__marks.streamAsked ??= performance.now();
          this.addEventListener('open', () => { window.__marks.streamOpen ??= performance.now(); });
        }
      };
      const shell = new MutationObserver(() => {
        if (!document.querySelector('[data-testid="sidebar"]')) return;
        shell.disconnect();
        window.__marks.shell = performance.now();
      });
      // From the document's start: the app often mounts before DOMContentLoaded.
      shell.observe(document, { childList: true, subtree: true });
    }, PAINTED);
    // The paint is heard as a console message: waiting with `waitForFunction` would load
    // Playwright's own script into the page in the middle of the load measured (10 ms of its
    // main thread in a traced load, before the app's first frame).
    const painted = page.waitForEvent('console', { predicate: (m) => m.text() === PAINTED, timeout: 60_000 });
    await page.goto(ui.url);
    await painted;
    const { paintedAt, rows, snapshotEnd, steps, calls, marks } = await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0];
      const res = performance.getEntriesByType('resource');
      // Resource entries are listed as they end; the calls were counted as they began.
      const api = res.filter((e) => e.name.endsWith('/api')).sort((x, y) => x.startTime - y.startTime);
      const first = api.reduce((m, e) => (m && m.startTime <= e.startTime ? m : e), null);
      return {
        paintedAt: window.__paintedAt,
        rows: document.querySelectorAll('[data-testid="session-item"]').length,
        // The first snapshot's answer (the UI may ask another once its change stream is open).
        snapshotEnd: api.find((e, i) => window.__cmds[i] === 'snapshot')?.responseEnd ?? NaN,
        // Where the time before the first paint goes.
        steps: {
          page: nav?.responseEnd ?? NaN,
          // The page's own scripts and styles, not the parts loaded lazily after the paint.
          scripts: Math.max(0, ...res.filter((e) => /\.(js|css)$/.test(e.name) && e.startTime < (nav?.domContentLoadedEventStart ?? Infinity)).map((e) => e.responseEnd)),
          domReady: nav?.domContentLoadedEventEnd ?? NaN,
          apiAsked: first?.startTime ?? NaN,
          apiFirstByte: first?.responseStart ?? NaN,
          apiAnswered: first?.responseEnd ?? NaN,
          apiBytes: first?.encodedBodySize ?? NaN,
          calls: api.length,
        },
        calls: api.map((e, i) => ({ cmd: window.__cmds[i] ?? '?', start: e.startTime, firstByte: e.responseStart, end: e.responseEnd, kb: e.encodedBodySize / 1024 })),
        marks: { ...window.__marks, rows: window.__rowsAt },
      };
    });
    if (run < WARMUP) {
      warmup.push(paintedAt);
      await page.context().close();
      continue;
    }
    paints.push({ paintedAt, rows, snapshotEnd, steps, calls, marks });
    // Keystrokes in the search box: key down -> the first frame, painted, in which the list
    // reflects the box (every row shown matches what is typed; a deferred filter waits here).
    await page.locator('[data-testid="session-search"]').click();
    await page.evaluate(() => {
      window.__keys = [];
      window.__keysOwn = [];
      const box = document.querySelector('[data-testid="session-search"]');
      const list = document.querySelector('[data-testid="session-list"]');
      const reflects = () => {
        const query = box.value.trim().toLowerCase();
        const rows = [...document.querySelectorAll('[data-testid="session-list"] [data-testid="session-item"]')];
        return rows.length > 0 && rows.every((r) => (r.querySelector('.main')?.title ?? '').toLowerCase().includes(query));
      };
      // When the list last changed: the page's work for a key is done then, and what follows
      // until the frame starts is the wait for the display (no page can avoid it).
      let changedAt = 0;
      new MutationObserver(() => { changedAt = performance.now(); }).observe(list, { childList: true, subtree: true, characterData: true, attributes: true });
      box.addEventListener('keydown', (e) => {
        const down = e.timeStamp;
        changedAt = down;
        const frame = () => requestAnimationFrame((frameStart) => {
          if (!reflects()) return frame();
          const ready = changedAt;
          window.__afterFrame(() => {
            const painted = performance.now();
            window.__keys.push(painted - down);
            window.__keysOwn.push(painted - down - Math.max(0, frameStart - ready));
          });
        });
        frame();
      }, { capture: true });
    });
    for (const ch of 'session 1') {
      await page.keyboard.type(ch);
      await page.waitForTimeout(150);
    }
    keys.push(...(await page.evaluate(() => window.__keys)));
    keysOwn.push(...(await page.evaluate(() => window.__keysOwn)));
    await page.context().close();
  }
  await browser.close();
  await ui.stop();
  const paint = stats(paints.map((p) => p.paintedAt));
  const fromSnapshot = stats(paints.map((p) => p.paintedAt - p.snapshotEnd));
  const key = stats(keys);
  const median = (f) => stats(paints.map((p) => p.steps[f])).p50;
  console.log(
    `servers sidebar first paint (3 x ${PER_SERVER} sessions, ${paints[0].rows} rows rendered, navigation start -> painted, ${LOADS} loads): ${fmt(paint)} ` +
      `(target <= 150 ms: ${verdict(paint.p50 <= 150)}); of it after the first snapshot's answer: ${fmt(fromSnapshot)}; ` +
      `each load: ${paints.map((p) => p.paintedAt.toFixed(0)).join(', ')} ms (before them, not counted: ${warmup.map((t) => t.toFixed(0)).join(', ')} ms, ` +
      `the first loads of a browser and a server just started)`,
  );
  console.log(
    `  medians from navigation start: page ${median('page').toFixed(0)} ms, scripts and styles ${median('scripts').toFixed(0)} ms, ` +
      `DOM ready ${median('domReady').toFixed(0)} ms, first Api call asked ${median('apiAsked').toFixed(0)} ms, ` +
      `first byte ${median('apiFirstByte').toFixed(0)} ms, answered ${median('apiAnswered').toFixed(0)} ms ` +
      `(${(median('apiBytes') / 1024).toFixed(0)} KB; ${median('calls')} Api calls before the paint was read)`,
  );
  const last = paints.at(-1);
  console.log(
    `  the last load, from navigation start: ${Object.entries(last.marks).map(([k, v]) => `${k} ${v?.toFixed(0)}`).join(', ')} ms; ` +
      `Api calls: ${last.calls.map((c) => `${c.cmd} ${c.start.toFixed(0)} -> first byte ${c.firstByte.toFixed(0)} -> ${c.end.toFixed(0)} ms (${c.kb.toFixed(0)} KB)`).join(', ')}; painted ${last.paintedAt.toFixed(0)} ms`,
  );
  console.log(`servers search keystroke (key down -> filtered list painted): ${fmt(key)} (target <= 16 ms: ${verdict(key.p95 <= 16)})`);
  const keyOwn = stats(keysOwn);
  console.log(
    `  without the wait for the display's next frame (the list changed -> the start of the frame that drew it), the app's own share: ${fmt(keyOwn)} ` +
      `(target <= 16 ms: ${verdict(keyOwn.p95 <= 16)})`,
  );
  await ms.close();
} catch (err) {
  console.error(`servers bench failed: ${err.stack ?? err}`);
  exitCode = 1;
} finally {
  await cleanupAll();
}
process.exit(exitCode);
