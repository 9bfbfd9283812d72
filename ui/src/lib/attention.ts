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
  return new NeedsYouIndex().items(sessions);
}

/** The newest-first order of the list. */
function newestFirst(a: NeedsYouItem, b: NeedsYouItem): number {
  return b.reason.since - a.reason.since || (a.key < b.key ? -1 : 1);
}

/** The list kept between changes: a session whose view is the same object as last time keeps
 * its item objects, so a keyed list redraws only the rows of the sessions that changed, and the
 * order is only sorted again when an item came, went or moved. */
export class NeedsYouIndex {
  private bySession = new Map<string, { session: SessionView; items: NeedsYouItem[] }>();
  private last: NeedsYouItem[] = [];

  /** Every reason of every session, newest first. */
  items(sessions: Iterable<SessionView>): NeedsYouItem[] {
    const next = new Map<string, { session: SessionView; items: NeedsYouItem[] }>();
    let changed = false;
    let count = 0;
    for (const session of sessions) {
      const reasons = session.attention;
      if (!reasons || reasons.length === 0) continue;
      let entry = this.bySession.get(session.id);
      if (!entry || entry.session !== session) {
        entry = { session, items: reasons.map((reason) => ({ key: reasonKey(session.id, reason), session, reason })) };
        changed = true;
      }
      next.set(session.id, entry);
      count += entry.items.length;
    }
    if (!changed && next.size === this.bySession.size && count === this.last.length) return this.last;
    this.bySession = next;
    const all: NeedsYouItem[] = [];
    for (const entry of next.values()) for (const item of entry.items) all.push(item);
    this.last = all.sort(newestFirst);
    return this.last;
  }
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
