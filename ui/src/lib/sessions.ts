// Session helpers: the OpenChamber review link (metadata.openchamber) and the sidebar's grouping.

import type { Session } from '$lib/types/Session';

function openchamber(session: Session | undefined): Record<string, unknown> | null {
  const meta = session?.metadata?.openchamber;
  return meta && typeof meta === 'object' && !Array.isArray(meta) ? (meta as Record<string, unknown>) : null;
}

/** A review session: `openchamber.kind === 'review'` with an `originalSessionID`. */
export function isReviewSession(session: Session | undefined): boolean {
  const meta = openchamber(session);
  return meta?.kind === 'review' && typeof meta.originalSessionID === 'string' && meta.originalSessionID !== '';
}

/** The implementing session a review session belongs to. */
export function originalSessionIdOf(session: Session | undefined): string | null {
  const meta = openchamber(session);
  return isReviewSession(session) ? (meta?.originalSessionID as string) : null;
}

/** The review session linked to an implementing session. */
export function reviewSessionIdOf(session: Session | undefined): string | null {
  const id = openchamber(session)?.reviewSessionID;
  return typeof id === 'string' && id !== '' ? id : null;
}

/** Which way the transfer button on this session's assistant messages sends text. */
export function transferDirectionOf(session: Session | undefined): 'toImplementer' | 'toReviewer' | null {
  if (isReviewSession(session)) return 'toImplementer';
  if (reviewSessionIdOf(session)) return 'toReviewer';
  return null;
}

export function isArchived(session: Session): boolean {
  return typeof session.time?.archived === 'number' && session.time.archived > 0;
}

/** Last path segment of a directory (`/a/b/c/` → `c`). */
export function lastSegment(directory: string): string {
  const trimmed = directory.replace(/[\\/]+$/, '');
  const i = Math.max(trimmed.lastIndexOf('/'), trimmed.lastIndexOf('\\'));
  return (i >= 0 ? trimmed.slice(i + 1) : trimmed) || directory || '/';
}

export interface SessionGroup {
  directory: string;
  name: string;
  sessions: Session[];
}

/** Sessions for the sidebar: top-level only, filtered, newest first, grouped by directory
 * (groups ordered by their newest session). */
export function groupSessions(
  sessions: Iterable<Session>,
  options: { query?: string; showArchived?: boolean },
): SessionGroup[] {
  const query = (options.query ?? '').trim().toLowerCase();
  const list: Session[] = [];
  for (const s of sessions) {
    if (s.parentID) continue; // subagent sessions belong to their parent
    if (!options.showArchived && isArchived(s)) continue;
    if (query && !(s.title || '').toLowerCase().includes(query)) continue;
    list.push(s);
  }
  list.sort((a, b) => (b.time?.updated ?? 0) - (a.time?.updated ?? 0) || (a.id < b.id ? 1 : -1));
  const groups = new Map<string, SessionGroup>();
  for (const s of list) {
    let g = groups.get(s.directory);
    if (!g) {
      g = { directory: s.directory, name: lastSegment(s.directory), sessions: [] };
      groups.set(s.directory, g);
    }
    g.sessions.push(s);
  }
  return [...groups.values()];
}
