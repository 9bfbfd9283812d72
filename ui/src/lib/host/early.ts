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
let asked = false;

/** Asks the snapshot now (in a browser; once a page: the first script and the app both call
 * it, whichever of them runs first asks). */
export function askEarlySnapshot(): void {
  if (isDesktop || asked || typeof window === 'undefined') return;
  asked = true;
  const promise = webInvoke({ cmd: 'snapshot' });
  const request: EarlySnapshot = { promise };
  promise.then(
    (value) => (request.value = value),
    () => (request.failed = true),
  );
  early = request;
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
