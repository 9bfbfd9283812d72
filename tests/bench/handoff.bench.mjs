// Benchmark: the handoff's and a transfer's hot path against the real `opencode serve` with the
// scripted model, through `crosscheck serve`'s HTTP Api. Figures only; nothing is asserted.
//
// - handoff: the implementer's turn goes idle (as this bench's own event stream sees it) -> the
//   review prompt's user message appears in the review session. Baseline, in the same run and
//   round by round in turn with it: this bench itself sending a prompt the moment it sees a turn
//   go idle (the floor: event delivery plus one `prompt_async`).
// - transfer: the Transfer call leaves this bench -> the transferred text's user message appears
//   in the linked session. Baseline: this bench calling `prompt_async` on OpenCode directly with
//   the same request (the same parts, hidden one included, model and agent).
//
//   node bench/handoff.bench.mjs [rounds]   (CROSSCHECK_BIN = the crosscheck binary)
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { subscribeEvents } from '../support/events.mjs';
import { ownShareLine, sameRequest, stagesOf } from './own-share.mjs';

const ROUNDS = Number(process.argv[2] ?? 12);
const PASSWORD = 'bench-secret';
/** A handoff turn that streams for ~0.8 s, as a short real one would. */
const SLOW_TURN = { text: 'The handoff: changed the parser, added tests, nothing else.', chunkDelayMs: 200 };

const ms = await startModelServer();
const oc = await startOpencode({ modelUrl: ms.url, password: PASSWORD });
const cc = await startCrosscheck({
  opencodeUrl: oc.url,
  password: PASSWORD,
  env: { CROSSCHECK_LOG: process.env.CROSSCHECK_LOG ?? 'warn,crosscheck_core::transfer_timing=debug' },
});
const events = await subscribeEvents(oc.url, { headers: oc.authHeaders });

async function api(request) {
  const res = await fetch(`${cc.base}/api`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${cc.token}` },
    body: JSON.stringify(request),
  });
  const body = await res.json();
  if (!res.ok) throw new Error(`${request.cmd} -> ${res.status}: ${JSON.stringify(body)}`);
  return body;
}

/** Resolves with performance.now() when an event after index `from` matches. */
function stampWhen(pred, what, from = events.events.length) {
  return events.waitFor(pred, { from, what, timeoutMs: 60_000 }).then((ev) => ({ at: performance.now(), ev }));
}
const idleOf = (sid) => (e) => e.type === 'session.status' && e.properties.sessionID === sid && e.properties.status?.type === 'idle';
const userMessageIn = (sid, notIds) => (e) => e.type === 'message.updated' && e.properties.info?.sessionID === sid
  && e.properties.info.role === 'user' && !notIds.has(e.properties.info.id);
const sessionIdle = (sid) => (e) => e.type === 'session.idle' && e.properties.sessionID === sid;

function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { p50: at(0.5), p95: at(0.95), min: s[0], max: s.at(-1), n: s.length };
}
const fmt = ({ p50, p95, min, max, n }) => `p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms (min ${min.toFixed(1)}, max ${max.toFixed(1)}, n=${n})`;

/**
 * On the server's own clock: the newest assistant message of `from` completed -> the user
 * message `messageId` in `to` was created. No event delivery to this bench in it.
 */
async function serverGap(from, to, messageId) {
  const done = (await oc.json(`/session/${from}/message`)).filter((m) => m.info.role === 'assistant').at(-1);
  const sent = (await oc.json(`/session/${to}/message`)).find((m) => m.info.id === messageId);
  return sent.info.time.created - done.info.time.completed;
}

async function userIds(sid) {
  const msgs = await oc.json(`/session/${sid}/message`);
  return new Set(msgs.filter((m) => m.info.role === 'user').map((m) => m.info.id));
}

// --- handoff ---------------------------------------------------------------------------------
// Each round: a handoff through Crosscheck, then the baseline (this bench reacting to an idle by
// sending a prompt itself), so that both meet the server in the same spell of the machine.
const original = await oc.json('/session', { method: 'POST', body: { title: 'Bench original' } });
const a = await oc.json('/session', { method: 'POST', body: { title: 'Bench baseline A' } });
const b = await oc.json('/session', { method: 'POST', body: { title: 'Bench baseline B' } });
const handoffSamples = [];
const handoffServer = [];
const baselineSamples = [];
const baselineServer = [];
let review = null;

async function handoffRound() {
  ms.script([{ ...SLOW_TURN }, {}]);
  const from = events.events.length;
  const seen = review ? await userIds(review) : new Set();
  const flow = await api({ cmd: 'startHandoffReview', sessionId: original.id });
  // The review session exists once the flow prepared it (the first round creates it).
  const idleAt = await stampWhen(idleOf(original.id), 'the handoff turn idle', from);
  if (!review) {
    const deadline = Date.now() + 30_000;
    while (!review && Date.now() < deadline) {
      const s = await oc.json(`/session/${original.id}`);
      review = s.metadata?.openchamber?.reviewSessionID ?? null;
      if (!review) await new Promise((r) => setTimeout(r, 20));
    }
  }
  const prompt = await stampWhen(userMessageIn(review, seen), 'the review prompt', from);
  handoffSamples.push(prompt.at - idleAt.at);
  handoffServer.push(await serverGap(original.id, review, prompt.ev.properties.info.id));
  await events.waitFor(sessionIdle(review), { from, what: 'the review turn', timeoutMs: 60_000 });
  // The flow ends once it released its claim (a request of its own to the server, which may
  // come after the review turn): the next handoff would otherwise find this one running.
  const deadline = Date.now() + 30_000;
  while (!(await api({ cmd: 'snapshot' })).flows.find((f) => f.id === flow.id)?.ended) {
    if (Date.now() > deadline) throw new Error('the handoff flow did not end');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function baselineRound(i) {
  ms.script([{ ...SLOW_TURN }, {}]);
  const from = events.events.length;
  const seen = await userIds(b.id);
  await oc.fetch(`/session/${a.id}/prompt_async`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ parts: [{ type: 'text', text: `turn ${i}` }] }),
  }).then((r) => r.text());
  const idleAt = await stampWhen(idleOf(a.id), 'baseline idle', from);
  const sent = oc.fetch(`/session/${b.id}/prompt_async`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ parts: [{ type: 'text', text: `reaction ${i}` }] }),
  }).then((r) => r.text());
  const prompt = await stampWhen(userMessageIn(b.id, seen), 'baseline prompt', from);
  await sent;
  baselineSamples.push(prompt.at - idleAt.at);
  baselineServer.push(await serverGap(a.id, b.id, prompt.ev.properties.info.id));
  await events.waitFor(sessionIdle(b.id), { from, what: 'baseline reaction turn', timeoutMs: 60_000 });
}

try {
  for (let i = 0; i < ROUNDS; i++) {
    // Which goes first alternates, so neither always follows the other's turn.
    if (i % 2 === 0) {
      await handoffRound();
      await baselineRound(i);
    } else {
      await baselineRound(i);
      await handoffRound();
    }
  }
} catch (e) {
  console.error(`handoff rounds: ${handoffSamples.length}, baseline rounds: ${baselineSamples.length}; crosscheck's log:\n${cc.output()}`);
  throw e;
}

// --- transfer --------------------------------------------------------------------------------
// The review session answered every round; transfer each of its replies back to the original,
// newest first (each once: a message sent before asks first).
await api({ cmd: 'openSession', sessionId: review });
// A person transfers a reply they see: reaching the older ones means scrolling up, which loads
// the older pages into the open transcript (the UI's loadOlder); without it the older replies
// of a long run would be read from the server, which no click does.
for (let pages = 0; pages < 50; pages++) {
  const older = await api({ cmd: 'loadOlder', sessionId: review });
  if (!older.hasOlder) break;
}
const transferSamples = [];
const directSamples = [];
/** How long OpenCode takes to answer `prompt_async` itself (the 204), nothing else in flight. */
const directHttpSamples = [];
const replies = (await oc.json(`/session/${review}/message`)).filter((m) => m.info.role === 'assistant');
for (let i = 0; i < ROUNDS; i++) {
  const reply = replies[(replies.length - 1 - i + replies.length) % replies.length];
  ms.script([{}]);
  let from = events.events.length;
  let seen = await userIds(original.id);
  let t0 = performance.now();
  const call = api({ cmd: 'transfer', sessionId: review, messageId: reply.info.id });
  let prompt = await stampWhen(userMessageIn(original.id, seen), 'the transferred prompt', from);
  await call;
  transferSamples.push(prompt.at - t0);
  await events.waitFor(sessionIdle(original.id), { from, what: 'the transferred turn', timeoutMs: 60_000 });
  const same = JSON.stringify(await sameRequest(oc, original.id, prompt.ev.properties.info.id));

  ms.script([{}]);
  from = events.events.length;
  seen = await userIds(original.id);
  t0 = performance.now();
  const direct = oc.fetch(`/session/${original.id}/prompt_async`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: same,
  }).then((r) => r.text()).then(() => directHttpSamples.push(performance.now() - t0));
  prompt = await stampWhen(userMessageIn(original.id, seen), 'the direct prompt', from);
  await direct;
  directSamples.push(prompt.at - t0);
  await events.waitFor(sessionIdle(original.id), { from, what: 'the direct turn', timeoutMs: 60_000 });
}

const h = stats(handoffSamples.slice(1));
const first = handoffSamples[0];
const base = stats(baselineSamples);
const t = stats(transferSamples);
const d = stats(directSamples);
console.log(`handoff: reply completed -> review prompt accepted (real opencode serve, ${ROUNDS} rounds)`);
console.log(`  first round (creates and links the review session): ${first.toFixed(1)} ms`);
console.log(`  crosscheck, reuse rounds: ${fmt(h)}`);
console.log(`  baseline (a client prompting the moment it sees idle): ${fmt(base)}`);
console.log(`  ratio p50: ${(h.p50 / base.p50).toFixed(2)}x the baseline`);
console.log(`  on the server's clock (reply time.completed -> prompt time.created): crosscheck ${fmt(stats(handoffServer.slice(1)))}; baseline ${fmt(stats(baselineServer))}`);
console.log(`transfer: click -> prompt accepted (real opencode serve, ${ROUNDS} rounds)`);
console.log(`  crosscheck Transfer through its Api: ${fmt(t)}`);
console.log(`  baseline (the same prompt_async straight to OpenCode): ${fmt(d)}`);
console.log(`  ratio p50: ${(t.p50 / d.p50).toFixed(2)}x the baseline`);
// Crosscheck minus the baseline client, per flow: the handoff on the server's clock (reply
// completed -> prompt created: both sides include their own event delivery), the transfer on
// this bench's clock (the call leaves -> the prompt's user message is seen).
console.log(ownShareLine('handoff', handoffServer.slice(1), baselineServer));
console.log(ownShareLine('transfer', transferSamples, directSamples));
const transferStages = stagesOf(cc.output(), /transfer \(ms\):(.*), total ([\d.]+)/);
if (transferStages) console.log(`crosscheck's transfer stages, from the request reaching it (ms since then): ${transferStages}`);
console.log(`server floor: OpenCode answering prompt_async itself (request sent -> 204 received, idle session, nothing else in flight): ${fmt(stats(directHttpSamples))}`);

events.close();
await cc.stop();
await oc.dispose();
await ms.close();
