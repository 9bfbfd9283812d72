// Where an in-app cold review's text came from (the session, and the reply or the plan file),
// by ledger key: the Reviews panel opens it and reviews it again from there. The ledger itself
// keeps no session (gates write it too), so the app remembers the reviews it started, also
// across a restart.

import type { ReviewProgress } from '$lib/types/ReviewProgress';
import { load, save } from './persist';

const KEY = 'crosscheck.reviewOrigins';
/** The most origins kept (the oldest are dropped first). */
const KEPT = 500;

/** The session and reply (or plan file) a review was run on. */
export interface ReviewOrigin {
  sessionId: string;
  messageId?: string;
  path?: string;
}

function valid(value: unknown): value is ReviewOrigin {
  return !!value && typeof (value as ReviewOrigin).sessionId === 'string';
}

class ReviewOrigins {
  private byKey: Record<string, ReviewOrigin> = $state(
    Object.fromEntries(Object.entries(load<Record<string, unknown>>(KEY, {}) ?? {}).filter(([, v]) => valid(v))) as Record<
      string,
      ReviewOrigin
    >,
  );

  /** Remembers where a review started here came from. */
  remember(review: ReviewProgress): void {
    const known = this.byKey[review.key];
    const origin: ReviewOrigin = {
      sessionId: review.sessionId,
      ...(review.messageId ? { messageId: review.messageId } : {}),
      ...(review.path ? { path: review.path } : {}),
    };
    if (known && known.sessionId === origin.sessionId && known.messageId === origin.messageId && known.path === origin.path) return;
    const { [review.key]: _old, ...rest } = this.byKey;
    const entries = Object.entries(rest);
    this.byKey = Object.fromEntries([...entries.slice(Math.max(0, entries.length - KEPT + 1)), [review.key, origin]]);
    save(KEY, $state.snapshot(this.byKey));
  }

  /** Where the review with this ledger key came from, when it was started here. */
  of(key: string): ReviewOrigin | undefined {
    return this.byKey[key];
  }
}

export const reviewOrigins = new ReviewOrigins();
