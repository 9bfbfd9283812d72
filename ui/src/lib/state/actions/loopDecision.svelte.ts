// Deciding a review loop stopped on a dispute or a stall, one mechanism for the loop strip and
// the finding itself: accept the dispute (the findings are withdrawn), keep them with a note to
// the implementer, or run one more round. Which findings of a stopped loop the person already
// decided is remembered per loop, so neither place offers them again.

import type { LoopState } from '$lib/types/LoopState';
import { load, save } from '../persist';
import { call } from './call';
import { startLoop } from './loops';
import { sendPrompt } from './turns';

/** What the person decides. */
export type LoopDecision = 'withdraw' | 'keep' | 'round';

const DECIDED_KEY = 'crosscheck.loop.decided';
/** Loops whose decided findings are remembered (the newest). */
const KEEP_LOOPS = 50;

/** Per loop id, the findings the person decided (withdrawn or kept with a note). */
let decided = $state<Record<string, string[]>>(load<Record<string, string[]>>(DECIDED_KEY, {}));

/** Whether the loop ended on a stop the person decides (a dispute or a stall). */
export function isDecidable(loop: LoopState | undefined): loop is LoopState & { stop: NonNullable<LoopState['stop']> } {
  return !!loop?.ended && (loop.stop?.reason === 'disputed' || loop.stop?.reason === 'stalled');
}

/** The findings of a stopped loop still waiting for the person's decision. */
export function undecidedFindings(loop: LoopState | undefined): string[] {
  if (!isDecidable(loop)) return [];
  const done = decided[loop.id] ?? [];
  return loop.stop.findingIds.filter((id) => !done.includes(id));
}

function remember(loopId: string, findingIds: string[]): void {
  const known = decided[loopId] ?? [];
  const others = Object.entries(decided).filter(([id]) => id !== loopId).slice(-(KEEP_LOOPS - 1));
  decided = { ...Object.fromEntries(others), [loopId]: [...new Set([...known, ...findingIds])] };
  save(DECIDED_KEY, decided);
}

/** The words the implementer receives when the person keeps findings with a note. */
export function keepNote(findingIds: string[], note: string): string {
  return `${findingIds.join(', ')}: ${note.trim()}`;
}

/**
 * Decides `findingIds` of the stopped `loop` (of the pair `sessionId` belongs to). Failures are
 * toasts and rethrown; only a decision that went through is remembered.
 */
export async function decideLoop(
  sessionId: string,
  loop: LoopState,
  how: LoopDecision,
  findingIds: string[],
  note = '',
): Promise<void> {
  if (how === 'withdraw') await call({ cmd: 'withdrawFindings', sessionId, findingIds });
  else if (how === 'keep') await sendPrompt(loop.originalSessionId, keepNote(findingIds, note));
  else await startLoop(sessionId, 1);
  if (how !== 'round') remember(loop.id, findingIds);
}
