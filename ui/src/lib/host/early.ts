// The snapshot asked by the page's first script (src/early.ts) in a browser, before the app's
// script has loaded: the two travel together, and the snapshot is there when the app mounts.
// Only the web transport's requests (web.ts) come with it.

import type { Snapshot } from '$lib/types/Snapshot';
import { isDesktop, webInvoke } from './web';

/** A snapshot request made early; `value` once it answered, `failed` when it did not. */
export interface EarlySnapshot {
  readonly promise: Promise<Snapshot>;
  value?: Snapshot;
  failed?: boolean;
}

let early: EarlySnapshot | null = null;

/** Asks the snapshot now (in a browser; once). */
export function askEarlySnapshot(): void {
  if (isDesktop || early || typeof window === 'undefined') return;
  const promise = webInvoke({ cmd: 'snapshot' });
  const asked: EarlySnapshot = { promise };
  promise.then(
    (value) => (asked.value = value),
    () => (asked.failed = true),
  );
  early = asked;
}

/** The early request, handed over once (to boot). */
export function takeEarlySnapshot(): EarlySnapshot | null {
  const taken = early;
  early = null;
  return taken;
}

/** The early request without taking it. */
export function peekEarlySnapshot(): EarlySnapshot | null {
  return early;
}
