// Benchmark: the same `/global/event` stream consumed by the official @opencode-ai/sdk in Node
// (parse only) and by Crosscheck's Rust client + store (parse and apply), over real loopback
// HTTP. Five paired runs (SDK, then Crosscheck, on the same stream), each printed with its
// ratio, then the median ratio. Figures only; nothing is asserted.
//
//   node bench/event-stream.bench.mjs [events]   (CROSSCHECK_STREAM_BENCH = the Rust binary)
import { spawn } from 'node:child_process';
import http from 'node:http';
import { createOpencodeClient } from '@opencode-ai/sdk/v2';
import { buildStream } from './stream-fixture.mjs';

const N = Number(process.argv[2] ?? 200_000);
const { text, events, sessionId } = buildStream(N);
const body = Buffer.from(text);

const server = http.createServer((req, res) => {
  if (!req.url.startsWith('/global/event')) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  // Write in 64 KiB chunks, then keep the connection open like the real server.
  const CHUNK = 64 * 1024;
  let off = 0;
  const pump = () => {
    while (off < body.length) {
      const ok = res.write(body.subarray(off, off + CHUNK));
      off += CHUNK;
      if (!ok) return res.once('drain', pump);
    }
  };
  pump();
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}`;
console.log(`stream: ${events} events, ${(body.length / 1e6).toFixed(1)} MB`);

async function sdkRun() {
  const client = createOpencodeClient({ baseUrl: url });
  const t0 = performance.now();
  const result = await client.global.event();
  let seen = 0;
  for await (const ev of result.stream) {
    if (ev) seen += 1;
    if (seen >= events) break;
  }
  const ms = performance.now() - t0;
  return { seen, ms, rate: (seen / ms) * 1000 };
}

function rustRun() {
  const bin = process.env.CROSSCHECK_STREAM_BENCH;
  if (!bin) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const child = spawn(bin, [url, String(events), sessionId], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`stream bench exited ${code}`));
      const m = out.match(/events_per_s=(\d+(?:\.\d+)?)/);
      resolve(m ? { rate: Number(m[1]), line: out.trim() } : null);
    });
  });
}

// Warm up once, then five paired runs: each Crosscheck figure beside the SDK's of the same run.
const RUNS = 5;
await sdkRun();
if (!process.env.CROSSCHECK_STREAM_BENCH) {
  const sdk = await sdkRun();
  console.log(`@opencode-ai/sdk (Node, parse only): ${Math.round(sdk.rate)} events/s (${sdk.ms.toFixed(0)} ms)`);
  console.log('crosscheck: set CROSSCHECK_STREAM_BENCH to the stream_bench binary to compare');
} else {
  const ratios = [];
  for (let i = 0; i < RUNS; i += 1) {
    const sdk = await sdkRun();
    const rust = await rustRun();
    if (!rust) throw new Error('the stream bench printed no events_per_s');
    const ratio = rust.rate / sdk.rate;
    ratios.push(ratio);
    console.log(
      `event stream run ${i + 1}: @opencode-ai/sdk (Node, parse only) ${Math.round(sdk.rate)} events/s, ` +
        `crosscheck (Rust, parse + apply to store) ${Math.round(rust.rate)} events/s, ratio ${ratio.toFixed(2)}x`,
    );
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  console.log(
    `event stream ratio crosscheck / sdk: median ${sorted[Math.floor(RUNS / 2)].toFixed(2)}x ` +
      `(${sorted[0].toFixed(2)}-${sorted[RUNS - 1].toFixed(2)}, ${RUNS} paired runs; target >= 3x)`,
  );
}
server.close();
process.exit(0);
