// Session helpers: the review link (resolved by the backend) and the sidebar's grouping.

import type { ServerView } from '$lib/types/ServerView';
import type { Session } from '$lib/types/Session';
import type { SessionView } from '$lib/types/SessionView';

/** A review session: the backend resolved its link to an original. */
export function isReviewSession(session: SessionView | undefined): boolean {
  return session?.link?.kind === 'review';
}

/** The implementing session a review session belongs to. */
export function originalSessionIdOf(session: SessionView | undefined): string | null {
  return session?.link?.kind === 'review' ? session.link.otherSessionId : null;
}

/** The review session linked to an implementing session. */
export function reviewSessionIdOf(session: SessionView | undefined): string | null {
  return session?.link?.kind === 'original' ? session.link.otherSessionId : null;
}

/** A review session whose original was deleted: nothing it says can be sent anywhere. */
export function isOrphanedReview(session: SessionView | undefined): boolean {
  return session?.link?.kind === 'review' && !session.link.otherExists;
}

/** Which way the transfer button on this session's assistant messages sends text; none when
 * the session on the other side is gone (the button could only fail). */
export function transferDirectionOf(session: SessionView | undefined): 'toImplementer' | 'toReviewer' | null {
  if (session?.link && !session.link.otherExists) return null;
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

/** One server's part of the sidebar: the server, then its project groups. */
export type ServerSection = { server: ServerView; groups: SessionGroup[] };

/** Sessions grouped by server (in the order given: the main one first), then by project. A
 *  server with no session matching still has its section, so a down server stays on screen. */
export function groupByServer(
  sessions: Iterable<SessionView>,
  servers: Iterable<ServerView>,
  options: { query?: string; showArchived?: boolean },
): ServerSection[] {
  const byServer = new Map<string, SessionView[]>();
  for (const s of sessions) {
    const id = s.serverId ?? 'main';
    let list = byServer.get(id);
    if (!list) byServer.set(id, (list = []));
    list.push(s);
  }
  return [...servers].map((server) => ({
    server,
    groups: groupSessions(byServer.get(server.id) ?? [], options),
  }));
}
