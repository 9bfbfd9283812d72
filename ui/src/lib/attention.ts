// The "Needs you" list and the sidebar's filters, read from the one backend fact: each
// session's `attention` reasons. Pure functions, so the list, the unread dots, the title count
// and the notifier agree.

import type { AttentionKind } from '$lib/types/AttentionKind';
import type { AttentionReason } from '$lib/types/AttentionReason';
import type { SessionView } from '$lib/types/SessionView';

/** One item of the list: a session and one reason it needs the person. */
export interface NeedsYouItem {
  key: string;
  session: SessionView;
  reason: AttentionReason;
}

/** The sidebar's filters. */
export type SessionFilter = 'all' | 'needsYou' | 'running' | 'done';

/** The filters in the order they are offered. */
export const SESSION_FILTERS: SessionFilter[] = ['all', 'needsYou', 'running', 'done'];

/** Whether looking at the session settles the reason (the backend's rule, mirrored). */
export function clearedBySeeing(kind: AttentionKind): boolean {
  return kind !== 'permission' && kind !== 'question' && kind !== 'reviewStale';
}

/** A reason's identity: the same reason pushed again has the same key. */
export function reasonKey(sessionId: string, reason: AttentionReason): string {
  return `${sessionId}:${reason.kind}:${reason.requestId ?? reason.since}`;
}

/** Every reason of every session, newest first. */
export function needsYouItems(sessions: Iterable<SessionView>): NeedsYouItem[] {
  const items: NeedsYouItem[] = [];
  for (const session of sessions) {
    for (const reason of session.attention ?? []) items.push({ key: reasonKey(session.id, reason), session, reason });
  }
  return items.sort((a, b) => b.reason.since - a.reason.since || (a.key < b.key ? -1 : 1));
}

/** Whether the session has something the person has not seen yet (its row's dot). */
export function isUnread(session: SessionView | undefined): boolean {
  return !!session?.attention?.some((r) => clearedBySeeing(r.kind));
}

/** Whether the session needs the person at all. */
export function needsYou(session: SessionView): boolean {
  return (session.attention?.length ?? 0) > 0;
}

/** Whether a session shows under a filter; `running` says whether its turn runs. */
export function matchesFilter(session: SessionView, filter: SessionFilter, running: boolean): boolean {
  switch (filter) {
    case 'all':
      return true;
    case 'needsYou':
      return needsYou(session);
    case 'running':
      return running;
    case 'done':
      return !running && !(session.attention ?? []).some((r) => !['turnFinished', 'loopEnded'].includes(r.kind));
  }
}

/** The item after the one of `currentSessionId` (the first when none is current), wrapping. */
export function nextItem(items: NeedsYouItem[], currentSessionId: string | null): NeedsYouItem | null {
  if (items.length === 0) return null;
  const at = items.findIndex((i) => i.session.id === currentSessionId);
  if (at < 0) return items[0];
  for (let step = 1; step <= items.length; step++) {
    const item = items[(at + step) % items.length];
    if (item.session.id !== currentSessionId) return item;
  }
  return items[at];
}
