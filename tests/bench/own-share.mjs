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

/** The line `make bench` prints for one flow. */
export function ownShareLine(flow, ours, baseline) {
  const o = quantiles(ours);
  const b = quantiles(baseline);
  const p50 = o.p50 - b.p50;
  const p95 = o.p95 - b.p95;
  return `${flow}: own share p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms (target p50 <= 1 ms, p95 <= 3 ms)`;
}
