// Line comment actions: write one on a diff's lines, list a session's, close one, send the batch.
// Every answer carries the session's comments whole; pushes keep other windows in step.

import { t } from '$lib/i18n/index.svelte';
import { isReviewSession, originalSessionIdOf } from '$lib/sessions';
import type { LineComment } from '$lib/types/LineComment';
import type { SendOutcome } from '$lib/types/SendOutcome';
import { store } from '../store.svelte';
import { toasts } from '../toasts.svelte';
import { call } from './call';

/** The implementing session whose comments a session's diffs carry (a review session's
 * diffs are its original's). */
export function commentTarget(sessionId: string): string {
  const session = store.sessions.get(sessionId);
  return (isReviewSession(session) && originalSessionIdOf(session)) || sessionId;
}

/** The comments of the implementing session behind `sessionId`, as last known. */
export function commentsOf(sessionId: string): LineComment[] | undefined {
  return store.comments.get(commentTarget(sessionId));
}

function keep(sessionId: string, comments: LineComment[]): void {
  store.comments.set(commentTarget(sessionId), comments);
}

/** Loads the comments behind `sessionId` (each checked against its lines now). */
export async function loadComments(sessionId: string): Promise<void> {
  try {
    const list = await call({ cmd: 'listComments', sessionId });
    if (Array.isArray(list)) keep(sessionId, list);
  } catch {
    // reported as a toast
  }
}

/** Writes a comment on lines `startLine`..`endLine` of `path` into the batch. */
export async function addComment(
  sessionId: string,
  path: string,
  startLine: number,
  endLine: number,
  quote: string,
  body: string,
): Promise<void> {
  keep(sessionId, await call({ cmd: 'addComment', sessionId, path, startLine, endLine, quote, body }));
}

/** Closes a comment (a draft leaves the batch). */
export async function closeComment(sessionId: string, commentId: string): Promise<void> {
  keep(sessionId, await call({ cmd: 'closeComment', commentId }));
}

/** Sends the batch to the implementer (or to the running loop) and says so. */
export async function sendComments(sessionId: string): Promise<SendOutcome> {
  const before = (commentsOf(sessionId) ?? []).filter((c) => c.status === 'draft').length;
  const outcome = await call({ cmd: 'sendComments', sessionId });
  keep(sessionId, outcome.comments);
  toasts.push('success', t(outcome.queued ? 'comments.queued' : 'comments.sent', { count: before }));
  return outcome;
}
