// Review loop actions: loading the loops, starting and stopping a pair's loop.

import { isNewerLoop } from '$lib/loopOrder';
import type { LoopState } from '$lib/types/LoopState';
import { store } from '../store.svelte';
import { call } from './call';

/** The loop of the pair `sessionId` belongs to (either side), if it ever had one. */
export function loopFor(sessionId: string): LoopState | undefined {
  const direct = store.loops.get(sessionId);
  if (direct) return direct;
  for (const l of store.loops.values()) if (l.reviewSessionId === sessionId) return l;
  return undefined;
}

/** Loads every loop (the running ones and the newest ended), e.g. after the snapshot. */
export async function loadLoops(): Promise<void> {
  const all = await call({ cmd: 'listLoops' });
  for (const l of all) keepLoop(l);
}

/** Shows a loop's state unless the store holds a newer one for its pair (see [isNewerLoop]). */
function keepLoop(state: LoopState): void {
  if (isNewerLoop(state, store.loops.get(state.originalSessionId))) store.loops.set(state.originalSessionId, state);
}

/** Starts the pair's loop on the reviewer's newest prompt. */
export async function startLoop(sessionId: string, maxRounds: number): Promise<LoopState> {
  const state = await call({ cmd: 'startLoop', sessionId, maxRounds });
  keepLoop(state);
  return state;
}

/** Stops the pair's loop. */
export async function stopLoop(sessionId: string): Promise<void> {
  const state = await call({ cmd: 'stopLoop', sessionId });
  if (state) keepLoop(state);
}
