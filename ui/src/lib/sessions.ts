// Session helpers: the review link (resolved by the backend), archived, a folder's name.

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

