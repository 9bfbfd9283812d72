// Benchmark: the review loop's hot path against the real `opencode serve` with the scripted
// model, through `crosscheck serve`: a reply completes -> the loop's next prompt is accepted
// (its user message created), on the server's own clock, over every step of the loops (the
// reviewer's reply -> the feedback, the implementer's answer -> the response). Figures only;
// nothing is asserted.
//
// Baseline, in the same run and measured the same way: this bench itself playing the loop
// between two sessions with the same replies, sending each next prompt the moment its event
// stream shows the previous turn idle, as the same request Crosscheck sent for that step (the
// same parts, hidden ones included, model and agent): the floor is the server finishing a turn,
// event delivery, one `prompt_async`.
//
// The two meet the same server: the rounds run as trials of a few rounds each, a Crosscheck loop
// then the baseline replaying that loop's prompts in fresh sessions, alternately, so that a slow
// spell of the (shared) machine falls on both. Crosscheck's own log gives where its time goes
// (the stages of each step, from the reply seen complete in its store to the prompt accepted),
// and, on the wall clock, when its store showed each reply complete: the bench sets that beside
// the reply's completion on the server and its own event stream's idle.
//
// The scripted model answers at once by default; a second argument makes every loop turn take
// that many ms before its answer (as a short real turn would), in both runs: the loop then
// reconciles while the turn runs, as it does with a real model.
//
//   node bench/review-loop.bench.mjs [rounds] [turn-ms] [rounds-per-trial]
//   (CROSSCHECK_BIN = the crosscheck binary; rounds in all, 5 a trial by default)
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { subscribeEvents } from '../support/events.mjs';
import { ownShareLine, requestOf, stagesOf } from './own-share.mjs';

const ROUNDS = Math.max(2, Number(process.argv[2] ?? 50));
const TURN_MS = Number(process.argv[3] ?? 0);
const PER_TRIAL = Math.max(2, Math.min(ROUNDS, Number(process.argv[4] ?? 5)));
const TRIALS = Math.ceil(ROUNDS / PER_TRIAL);
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
function loopScript(rounds) {
  const script = [{ text: 'HANDOFF: the parser, with tests.' }];
  const turn = TURN_MS > 0 ? { delayMs: TURN_MS } : {};
  for (let k = 1; k <= rounds; k++) {
    const fixed = k > 1 ? `- [F${k - 1}] FIXED\n` : '';
    script.push({ ...turn, text: `FINDINGS\n${fixed}- [F${k}] major src/p.rs:${k} — issue ${k}\nVERDICT: FLAGS (1)` });
    if (k < rounds) script.push({ ...turn, text: `Done.\n- [F${k}] FIXED` });
  }
  return script;
}

/** Every message of these sessions (info with its session), as the server has them. */
async function messagesOf(sessions) {
  const all = [];
  for (const sid of sessions) {
    for (const m of await oc.json(`/session/${sid}/message`)) all.push({ sid, ...m.info });
  }
  return all;
}

/**
 * Server clock: for each prompt in `ours`, the newest assistant message of the other session
 * completed before it -> its creation. Answers each step: {gap, reply (the message), prompt}.
 */
function serverSteps(all, ours) {
  const steps = [];
  for (const prompt of all.filter((m) => ours.has(m.id))) {
    const before = all
      .filter((m) => m.sid !== prompt.sid && m.role === 'assistant' && m.time?.completed && m.time.completed <= prompt.time.created)
      .sort((a, b) => a.time.completed - b.time.completed);
    const reply = before.at(-1);
    if (reply) steps.push({ gap: prompt.time.created - reply.time.completed, reply, prompt });
  }
  return steps;
}

/** When this bench's stream showed `sid` idle after `t` (wall clock, ms), or undefined. */
function idleSeenAfter(sid, t) {
  return events.events.find((e) => e.type === 'session.status' && e.properties.sessionID === sid
    && e.properties.status?.type === 'idle' && e.at >= t)?.at;
}

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { p50: at(0.5), p95: at(0.95), min: sorted[0], max: sorted.at(-1), n: sorted.length };
}
const num = (x) => (Number.isInteger(x) ? String(x) : x.toFixed(1));
const fmt = ({ p50, p95, min, max, n }) => `p50 ${num(p50)}, p95 ${num(p95)}, min ${num(min)}, max ${num(max)}, n=${n}`;

/** One trial through Crosscheck: a handoff, then a loop of `rounds` rounds. */
async function crosscheckTrial(rounds, t) {
  ms.script(loopScript(rounds));
  const original = await oc.json('/session', { method: 'POST', body: { title: `Bench loop ${t}` } });
  const started = performance.now();
  await cc.api({ cmd: 'startHandoffReview', sessionId: original.id, reviewLoop: { maxRounds: rounds } });
  let loop;
  const deadline = Date.now() + 20 * 60_000;
  for (;;) {
    loop = (await cc.api({ cmd: 'listLoops' })).find((l) => l.originalSessionId === original.id);
    if (loop?.ended) break;
    if (Date.now() > deadline) throw new Error('the loop did not end');
    await new Promise((r) => setTimeout(r, 100));
  }
  const wall = performance.now() - started;
  // Only the log's tail is kept (16 KB): read the step lines now (a trial writes a few).
  const log = cc.output().replace(/\x1b\[[0-9;]*m/g, '').split('\n').filter((l) => l.includes('loop step (ms):'));
  const ours = new Set(loop.sentMessageIds.slice(1)); // the first review prompt is the handoff's
  const sessions = [loop.originalSessionId, loop.reviewSessionId];
  const byId = new Map();
  for (const sid of sessions) {
    for (const m of await oc.json(`/session/${sid}/message`)) byId.set(m.info.id, m);
  }
  const bodies = loop.sentMessageIds.slice(1).map((id) => byId.get(id)).filter(Boolean).map(requestOf);
  const steps = serverSteps(await messagesOf(sessions), ours);
  return { loop, wall, log, bodies, steps };
}

/** The same trial played by this bench: the same replies, the same prompts, sent at idle. */
async function baselineTrial(rounds, bodies, t) {
  const script = loopScript(rounds);
  ms.script(script);
  const a = await oc.json('/session', { method: 'POST', body: { title: `Bench baseline implementer ${t}` } });
  const b = await oc.json('/session', { method: 'POST', body: { title: `Bench baseline reviewer ${t}` } });
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
  return serverSteps(await messagesOf([a.id, b.id]), baseIds);
}

/** Crosscheck's step lines: reply id -> when its store showed the reply complete (wall clock). */
function seenTimes(log) {
  const seen = new Map();
  for (const line of log.split('\n')) {
    if (!line.includes('loop step (ms):')) continue;
    const reply = /reply_id="?([^"\s]+)"?/.exec(line)?.[1];
    const at = /seen_at="?([\d.]+)"?/.exec(line)?.[1];
    if (reply && at) seen.set(reply, Number(at));
  }
  return seen;
}

try {
  const ccSteps = [];
  const baseSteps = [];
  const logLines = new Set(); // each line names its reply: one step once
  let wall = 0;
  let rounds = 0;
  const stops = new Set();
  for (let t = 0; t < TRIALS; t++) {
    const r = Math.min(PER_TRIAL, ROUNDS - t * PER_TRIAL);
    if (r < 2) break; // a one-round loop sends nothing of its own
    const trial = await crosscheckTrial(r, t);
    ccSteps.push(...trial.steps);
    for (const line of trial.log) logLines.add(line);
    wall += trial.wall;
    rounds += trial.loop.round;
    stops.add(trial.loop.stop?.reason);
    baseSteps.push(...await baselineTrial(r, trial.bodies, t));
  }
  const gaps = ccSteps.map((s) => s.gap);
  const base = baseSteps.map((s) => s.gap);

  // --- where Crosscheck's time goes ---------------------------------------------------------
  const logs = [...logLines].join('\n');
  const stages = stagesOf(logs, /loop step \(ms\):(.*), total ([\d.]+)/);
  // From the reply's completion on the server: its idle reaching this bench's stream, and the
  // reply seen complete in Crosscheck's store (both on this machine's wall clock).
  const seen = seenTimes(logs);
  const ccIdle = [];
  const ccSeen = [];
  const ccAfterSeen = [];
  for (const s of ccSteps) {
    const i = idleSeenAfter(s.reply.sid, s.reply.time.completed - 1);
    if (i !== undefined) ccIdle.push(i - s.reply.time.completed);
    const at = seen.get(s.reply.id);
    if (at !== undefined) {
      ccSeen.push(at - s.reply.time.completed);
      ccAfterSeen.push(s.prompt.time.created - at);
    }
  }
  const baseIdle = [];
  const baseAfterIdle = [];
  for (const s of baseSteps) {
    const i = idleSeenAfter(s.reply.sid, s.reply.time.completed - 1);
    if (i === undefined) continue;
    baseIdle.push(i - s.reply.time.completed);
    baseAfterIdle.push(s.prompt.time.created - i);
  }

  const s = stats(gaps);
  const bs = stats(base);
  console.log(`review loop: ${rounds} rounds in ${TRIALS} trials of ${PER_TRIAL} (each a Crosscheck loop, then the baseline replaying it), stopped: ${[...stops].join(', ')}, loops' wall ${(wall / 1000).toFixed(1)} s, each turn ${TURN_MS ? `${TURN_MS} ms before its answer` : 'answered at once'}`);
  console.log(`review loop, reply completed -> next loop prompt accepted (server clock, ms): ${fmt(s)}`);
  console.log(`baseline (this bench sending the same prompts the moment it sees idle, same replies, server clock, ms): ${fmt(bs)}`);
  console.log(`  ratio p50: ${(s.p50 / Math.max(1, bs.p50)).toFixed(2)}x the baseline; crosscheck minus baseline p50: ${num(s.p50 - bs.p50)} ms`);
  console.log(ownShareLine('loop step', gaps, base));
  if (ccSeen.length) {
    console.log(`  trace (wall clock, ms): reply completed -> seen complete in crosscheck's store ${fmt(stats(ccSeen))}; -> its idle reached this bench ${fmt(stats(ccIdle))}; seen -> next prompt created ${fmt(stats(ccAfterSeen))}`);
    console.log(`  trace, baseline (wall clock, ms): reply completed -> its idle reached this bench ${fmt(stats(baseIdle))}; -> next prompt created ${fmt(stats(baseAfterIdle))}`);
  }
  if (stages) console.log(`crosscheck's stages, from the reply seen complete in its store (ms since then): ${stages}`);
} finally {
  events.close();
  await cc.stop();
  await oc.dispose();
  await ms.close();
}
