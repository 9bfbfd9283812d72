// Benchmark: the review loop's hot path against the real `opencode serve` with the scripted
// model, through `crosscheck serve`: a reply completes -> the loop's next prompt is accepted
// (its user message created), on the server's own clock, over every step of a 50-round loop
// (the reviewer's reply -> the feedback, the implementer's answer -> the response). Figures
// only; nothing is asserted.
//
//   node bench/review-loop.bench.mjs [rounds]   (CROSSCHECK_BIN = the crosscheck binary)
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';

const ROUNDS = Math.min(50, Number(process.argv[2] ?? 50));
const PASSWORD = 'bench-secret';

const ms = await startModelServer();
const oc = await startOpencode({ modelUrl: ms.url, password: PASSWORD });
const cc = await startCrosscheck({ opencodeUrl: oc.url, password: PASSWORD });

try {
  // Every round opens a new finding and reports the last one fixed: never stalled, never clean.
  const script = [{ text: 'HANDOFF: the parser, with tests.' }];
  for (let k = 1; k <= ROUNDS; k++) {
    const fixed = k > 1 ? `- [F${k - 1}] FIXED\n` : '';
    script.push({ text: `FINDINGS\n${fixed}- [F${k}] major src/p.rs:${k} — issue ${k}\nVERDICT: FLAGS (1)` });
    if (k < ROUNDS) script.push({ text: `Done.\n- [F${k}] FIXED` });
  }
  ms.script(script);
  const original = await oc.json('/session', { method: 'POST', body: { title: 'Bench loop' } });
  const started = performance.now();
  await cc.api({ cmd: 'startHandoffReview', sessionId: original.id, reviewLoop: { maxRounds: ROUNDS } });
  let loop;
  const deadline = Date.now() + 20 * 60_000;
  for (;;) {
    loop = (await cc.api({ cmd: 'listLoops' })).find((l) => l.originalSessionId === original.id);
    if (loop?.ended) break;
    if (Date.now() > deadline) throw new Error('the loop did not end');
    await new Promise((r) => setTimeout(r, 250));
  }
  const wall = performance.now() - started;

  const all = [];
  for (const sid of [loop.originalSessionId, loop.reviewSessionId]) {
    for (const m of await oc.json(`/session/${sid}/message`)) all.push({ sid, ...m.info });
  }
  const ours = new Set(loop.sentMessageIds.slice(1)); // the first review prompt is the handoff's
  const gaps = [];
  for (const prompt of all.filter((m) => ours.has(m.id))) {
    const before = all
      .filter((m) => m.sid !== prompt.sid && m.role === 'assistant' && m.time?.completed && m.time.completed <= prompt.time.created)
      .map((m) => m.time.completed);
    if (before.length) gaps.push(prompt.time.created - Math.max(...before));
  }
  gaps.sort((a, b) => a - b);
  const at = (q) => gaps[Math.min(gaps.length - 1, Math.floor(q * gaps.length))];
  console.log(`review loop: ${loop.round} rounds, stopped: ${loop.stop?.reason}, wall ${(wall / 1000).toFixed(1)} s`);
  console.log(`review loop, reply completed -> next loop prompt accepted (server clock, ms): p50 ${at(0.5)}, p95 ${at(0.95)}, min ${gaps[0]}, max ${gaps.at(-1)}, n=${gaps.length}`);
} finally {
  await cc.stop();
  await oc.dispose();
  await ms.close();
}
