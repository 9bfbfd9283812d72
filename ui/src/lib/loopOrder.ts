// Which of two states of a pair's review loop is the newer one. A state comes from three
// places (the loop's pushed changes, the listing asked after each snapshot, the answer to a
// start or a stop), and an answer that left the backend before a pushed change can arrive after
// it: the older state must not take the loop back.

import type { LoopState } from './types/LoopState';

/** How far a loop has come: it only moves forward (round, phase start, prompts sent, rounds
 * paid for), and it ends once. */
function progress(state: LoopState): number[] {
  return [state.ended ? 1 : 0, state.round, state.phaseStartedAt, state.sentMessageIds.length, state.costs.length];
}

/** Whether `next` should replace `known` as the pair's loop: a newer loop of the pair, or the
 * same loop further along (the same progress keeps the state already shown). */
export function isNewerLoop(next: LoopState, known: LoopState | undefined): boolean {
  if (!known) return true;
  if (next.id !== known.id) return next.startedAt >= known.startedAt;
  const a = progress(next);
  const b = progress(known);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] > b[i];
  return false;
}
