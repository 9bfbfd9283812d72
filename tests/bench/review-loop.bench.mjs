// Benchmark: the review loop's hot path against the real `opencode serve` with the scripted
// model, through `crosscheck serve`: a reply completes -> the loop's next prompt is accepted
// (its user message created), on the server's own clock, over every step of a 50-round loop
// (the reviewer's reply -> the feedback, the implementer's answer -> the response). Figures
// only; nothing is asserted.
//
// Baseline, in the same run and measured the same way: this bench itself playing the loop
// between two sessions with the same replies, sending each next prompt the moment its event
// stream shows the previous turn idle, as the same request Crosscheck sent for that step (the
// same parts, hidden ones included, model and agent): the floor is the server finishing a turn,
// event delivery, one `prompt_async`. Crosscheck's own log gives where its time goes (the stages of each
// step, from the reply seen complete in its store to the prompt accepted).
//
// The scripted model answers at once by default; a second argument makes every loop turn take
// that many ms before its answer (as a short real turn would), in both runs: the loop then
// reconciles while the turn runs, as it does with a real model.
//
//   node bench/review-loop.bench.mjs [rounds] [turn-ms]   (CROSSCHECK_BIN = the crosscheck binary)
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { subscribeEvents } from '../support/events.mjs';
import { ownShareLine, requestOf, stagesOf } from './own-share.mjs';

const ROUNDS = Math.min(50, Number(process.argv[2] ?? 50));
const TURN_MS = Number(process.argv[3] ?? 0);
const PASSWORD = 'bench-secret';

const ms = await startModelServer();
const oc = await startOpencode({ modelUrl: ms.url, password: PASSWORD });
const cc = await startCrosscheck({
  opencodeUrl: oc.url,
  password: PASSWORD,
  env: { CROSSCHECK_LOG: 'warn,crosscheck_core::loop_timing=debug' },
});
const events = await subscribeEvents(oc.url, { headers: oc.authHeaders });

/** Every round opens a new finding and reports the last one fixed: never stalled, never clean. */
function loopScript() {
  const script = [{ text: 'HANDOFF: the parser, with tests.' }];
  const turn = TURN_MS > 0 ? { delayMs: TURN_MS } : {};
  for (let k = 1; k <= ROUNDS; k++) {
    const fixed = k > 1 ? `- [F${k - 1}] FIXED\n` : '';
    script.push({ ...turn, text: `FINDINGS\n${fixed}- [F${k}] major src/p.rs:${k} — issue ${k}\nVERDICT: FLAGS (1)` });
    if (k < ROUNDS) script.push({ ...turn, text: `Done.\n- [F${k}] FIXED` });
  }
  return script;
}

/**
 * Server clock: for each prompt in `ours`, the newest assistant message of the other session
 * completed before it -> its creation.
 */
async function serverGaps(sessions, ours) {
  const all = [];
  for (const sid of sessions) {
    for (const m of await oc.json(`/session/${sid}/message`)) all.push({ sid, ...m.info });
  }
  const gaps = [];
  for (const prompt of all.filter((m) => ours.has(m.id))) {
    const before = all
      .filter((m) => m.sid !== prompt.sid && m.role === 'assistant' && m.time?.completed && m.time.completed <= prompt.time.created)
      .map((m) => m.time.completed);
    if (before.length) gaps.push(prompt.time.created - Math.max(...before));
  }
  return gaps.sort((a, b) => a - b);
}

function stats(sorted) {
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { p50: at(0.5), p95: at(0.95), min: sorted[0], max: sorted.at(-1), n: sorted.length };
}
const fmt = ({ p50, p95, min, max, n }) => `p50 ${p50}, p95 ${p95}, min ${min}, max ${max}, n=${n}`;

try {
  // --- the loop through Crosscheck ---------------------------------------------------------
  ms.script(loopScript());
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
  const ours = new Set(loop.sentMessageIds.slice(1)); // the first review prompt is the handoff's
  // Each of the loop's prompts, in order, for the baseline to send the same.
  const byId = new Map();
  for (const sid of [loop.originalSessionId, loop.reviewSessionId]) {
    for (const m of await oc.json(`/session/${sid}/message`)) byId.set(m.info.id, m);
  }
  const bodies = loop.sentMessageIds.slice(1).map((id) => byId.get(id)).filter(Boolean).map(requestOf);
  const gaps = await serverGaps([loop.originalSessionId, loop.reviewSessionId], ours);

  // --- baseline: this bench playing the same loop, prompting the moment it sees idle ----------
  ms.reset?.();
  const script = loopScript();
  ms.script(script);
  const a = await oc.json('/session', { method: 'POST', body: { title: 'Bench baseline implementer' } });
  const b = await oc.json('/session', { method: 'POST', body: { title: 'Bench baseline reviewer' } });
  const prompt = (sid, text, body = { parts: [{ type: 'text', text }] }) => oc.fetch(`/session/${sid}/prompt_async`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then((r) => r.text());
  const idle = (sid, from) => events.waitFor(
    (e) => e.type === 'session.status' && e.properties.sessionID === sid && e.properties.status?.type === 'idle',
    { from, what: 'a baseline turn idle', timeoutMs: 60_000 },
  );
  let from = events.events.length;
  await prompt(a.id, 'the handoff');
  await idle(a.id, from);
  from = events.events.length;
  await prompt(b.id, 'review this');
  for (let step = 0; step < script.length - 2; step++) {
    const [done, next] = step % 2 === 0 ? [b.id, a.id] : [a.id, b.id];
    await idle(done, from);
    from = events.events.length;
    await prompt(next, `step ${step}`, bodies[step]);
  }
  await idle((script.length - 3) % 2 === 0 ? a.id : b.id, from).catch(() => {});
  // Every prompt but the handoff and the first review, as for the loop.
  const baseIds = new Set();
  for (const sid of [a.id, b.id]) {
    const users = (await oc.json(`/session/${sid}/message`)).filter((m) => m.info.role === 'user');
    for (const m of users.slice(1)) baseIds.add(m.info.id);
  }
  const base = await serverGaps([a.id, b.id], baseIds);

  // --- where Crosscheck's time goes ---------------------------------------------------------
  const stages = stagesOf(cc.output(), /loop step \(ms\):(.*), total ([\d.]+)/);

  const s = stats(gaps);
  const bs = stats(base);
  console.log(`review loop: ${loop.round} rounds, stopped: ${loop.stop?.reason}, wall ${(wall / 1000).toFixed(1)} s, each turn ${TURN_MS ? `${TURN_MS} ms before its answer` : 'answered at once'}`);
  console.log(`review loop, reply completed -> next loop prompt accepted (server clock, ms): ${fmt(s)}`);
  console.log(`baseline (this bench sending the same prompts the moment it sees idle, same replies, server clock, ms): ${fmt(bs)}`);
  console.log(`  ratio p50: ${(s.p50 / Math.max(1, bs.p50)).toFixed(2)}x the baseline; crosscheck minus baseline p50: ${s.p50 - bs.p50} ms`);
  console.log(ownShareLine('loop step', gaps, base));
  if (stages) console.log(`crosscheck's stages, from the reply seen complete in its store (ms since then): ${stages}`);
} finally {
  events.close();
  await cc.stop();
  await oc.dispose();
  await ms.close();
}
