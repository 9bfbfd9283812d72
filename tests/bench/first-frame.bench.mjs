// Benchmark: opening a session whose newest 20 replies are 2 kB markdown with code, in headless
// Chromium against the UI's mock backend (the built UI in ui/dist). Measures the renderer's
// main-thread tasks from the click until the view settles: the longest one's wall and CPU time
// (Chromium trace, `RunTask` dur/tdur) and the long tasks the page itself observed. The
// baseline, in the same run and the same page set-up, opens a session of 50 short plain replies.
// Figures only; nothing is asserted.
//
//   node bench/first-frame.bench.mjs [runs]   (after `make ui`)
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { launchBrowser, REPO_ROOT } from '../support/browser.mjs';
import { trackChild } from '../support/cleanup.mjs';

const RUNS = Number(process.argv[2] ?? 5);

async function freePort() {
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

const port = await freePort();
const mock = spawn(process.execPath, [path.join(REPO_ROOT, 'ui', 'scripts', 'mock-backend.mjs'), '--port', String(port), '--messages', '200'], {
  stdio: ['ignore', 'pipe', 'inherit'],
  detached: true,
});
trackChild(mock.pid, 'mock backend');
await new Promise((resolve, reject) => {
  mock.stdout.on('data', (d) => String(d).includes('mock backend on') && resolve());
  mock.on('exit', (code) => reject(new Error(`mock backend exited ${code}`)));
});
const url = `http://127.0.0.1:${port}/`;

const browser = await launchBrowser();

/** Opens the app fresh, clicks the session titled `title`, and measures until it settles. */
async function open(title) {
  const page = await browser.newPage();
  await page.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask', buffered: true });
  });
  await page.goto(url);
  const item = page.locator('[data-testid="session-item"]', { hasText: title });
  await item.waitFor();
  // Let the boot work finish so it is not counted.
  await page.waitForTimeout(500);
  await browser.browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline'] });
  const clickedAt = await page.evaluate(() => performance.now());
  await item.click();
  await page.locator('[data-testid="message-list"] .row').first().waitFor();
  await page.waitForTimeout(1000);
  const trace = JSON.parse(String(await browser.browser.stopTracing()));
  const longTasks = (await page.evaluate(() => window.__longTasks)).filter((t) => t.start >= clickedAt);
  await page.context().close();
  const events = trace.traceEvents ?? trace;
  const main = new Set(
    events.filter((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`),
  );
  let wall = 0;
  let cpu = 0;
  let longestTask = null;
  for (const e of events) {
    if (e.name !== 'RunTask' || e.ph !== 'X' || !main.has(`${e.pid}:${e.tid}`)) continue;
    wall = Math.max(wall, (e.dur ?? 0) / 1000);
    cpu = Math.max(cpu, (e.tdur ?? 0) / 1000);
    if (!longestTask || e.dur > longestTask.dur) longestTask = e;
  }
  // What the longest task did: its largest piece of traced work (script, layout, a collection).
  let kind = 'untraced';
  let kindDur = 0;
  for (const e of events) {
    if (!longestTask || e === longestTask || e.ph !== 'X' || e.pid !== longestTask.pid || e.tid !== longestTask.tid) continue;
    if (e.ts < longestTask.ts || e.ts + (e.dur ?? 0) > longestTask.ts + longestTask.dur) continue;
    if ((e.dur ?? 0) > kindDur) {
      kindDur = e.dur ?? 0;
      kind = e.args?.data?.functionName ? `${e.name} ${e.args.data.functionName}` : e.name;
    }
  }
  const longest = longTasks.reduce((m, t) => Math.max(m, t.duration), 0);
  return { wall, cpu, kind, longTasks: longTasks.length, longest };
}

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const rows = [];
for (let i = 0; i < RUNS; i += 1) {
  const md = await open('Markdown replies');
  const plain = await open('Plain replies');
  rows.push({ md, plain });
  console.log(
    `first frame run ${i + 1}: markdown longest task ${md.wall.toFixed(1)} ms wall / ${md.cpu.toFixed(1)} ms CPU (${md.kind}) ` +
      `(${md.longTasks} long tasks, longest ${md.longest.toFixed(0)} ms); ` +
      `plain baseline ${plain.wall.toFixed(1)} ms wall / ${plain.cpu.toFixed(1)} ms CPU (${plain.kind})`,
  );
}
const mdWall = median(rows.map((r) => r.md.wall));
const mdCpu = median(rows.map((r) => r.md.cpu));
const plWall = median(rows.map((r) => r.plain.wall));
const plCpu = median(rows.map((r) => r.plain.cpu));
console.log(
  `first frame (median of ${RUNS}): markdown ${mdWall.toFixed(1)} ms wall / ${mdCpu.toFixed(1)} ms CPU, ` +
    `plain baseline ${plWall.toFixed(1)} ms wall / ${plCpu.toFixed(1)} ms CPU, ratio ${(mdWall / plWall).toFixed(2)}x wall / ${(mdCpu / plCpu).toFixed(2)}x CPU (target <= 50 ms wall and CPU)`,
);
await browser.close();
process.kill(-mock.pid, 'SIGTERM');
process.exit(0);
