// "Own share": what Crosscheck adds to a flow's hot path, measured as Crosscheck's figure minus
// a baseline client's in the same run (a client that sends the same single request the moment
// it sees idle). Both include the server accepting the prompt and the event delivery, so the
// difference is Crosscheck's own work. Quantiles are subtracted (p50 from p50, p95 from p95):
// the server's own spread (it takes 13-50 ms to accept a prompt) would swamp a per-sample pairing.

/** The p50 and p95 of a list of numbers (ms). */
export function quantiles(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { p50: at(0.5), p95: at(0.95) };
}

/** The own-share target (ms): p50 and p95 of Crosscheck minus the baseline. */
export const TARGET = { p50: 1, p95: 3 };

/** Whether an own share meets the target. */
export function meets({ p50, p95 }) {
  return p50 <= TARGET.p50 && p95 <= TARGET.p95;
}

/** Crosscheck's share of a flow: its p50 and p95 minus the baseline's (ms). */
export function ownShare(ours, baseline) {
  const o = quantiles(ours);
  const b = quantiles(baseline);
  return { p50: o.p50 - b.p50, p95: o.p95 - b.p95 };
}

/** The line `make bench` prints for one flow: the share, the target and whether it is met. */
export function ownShareLine(flow, ours, baseline) {
  const share = ownShare(ours, baseline);
  const verdict = meets(share) ? 'met' : 'NOT met';
  return `${flow}: own share p50 ${share.p50.toFixed(1)} ms, p95 ${share.p95.toFixed(1)} ms (target p50 <= ${TARGET.p50} ms, p95 <= ${TARGET.p95} ms: ${verdict})`;
}

/**
 * The body of the prompt that created user message `messageId` in `sessionId`, to send again
 * elsewhere (the baseline sends the same single request Crosscheck sent: the same text parts,
 * hidden ones included, model, agent and variant; no message id).
 */
export async function sameRequest(oc, sessionId, messageId) {
  const m = (await oc.json(`/session/${sessionId}/message`)).find((x) => x.info.id === messageId);
  if (!m) throw new Error(`no message ${messageId} in ${sessionId}`);
  return requestOf(m);
}

/** The body of the prompt that created user message `m` (see {@link sameRequest}). */
export function requestOf(m) {
  const body = {
    parts: m.parts
      .filter((p) => p.type === 'text')
      .map((p) => (p.synthetic ? { type: 'text', text: p.text, synthetic: true } : { type: 'text', text: p.text })),
  };
  if (m.info.model?.providerID) body.model = { providerID: m.info.model.providerID, modelID: m.info.model.modelID };
  if (m.info.agent) body.agent = m.info.agent;
  if (m.info.variant) body.variant = m.info.variant;
  return body;
}

/**
 * Crosscheck's stage log (`<what> (ms): stage @t stage @t, total T`, one line per step), read
 * from its output by `pattern` (first group: the stages, second: the total): each stage's p50 /
 * p95 of "ms since the step's start", or `null` when the log has none.
 */
export function stagesOf(output, pattern) {
  const stages = new Map();
  for (const line of output.split('\n')) {
    const m = pattern.exec(line);
    if (!m) continue;
    for (const [, stage, at] of m[1].matchAll(/ ([a-z ]+?) @([\d.]+)/g)) {
      if (!stages.has(stage)) stages.set(stage, []);
      stages.get(stage).push(Number(at));
    }
    if (!stages.has('total')) stages.set('total', []);
    stages.get('total').push(Number(m[2]));
  }
  if (!stages.size) return null;
  const parts = [...stages].map(([stage, v]) => {
    const q = quantiles(v);
    return `${stage} p50 ${q.p50.toFixed(2)} / p95 ${q.p95.toFixed(2)}`;
  });
  return `${parts.join('; ')} (n=${stages.get('total').length})`;
}
