// Cold review actions: starting a review, reading the ledger.

import { invoke } from '$lib/host';
import type { LedgerEntry } from '$lib/types/LedgerEntry';
import type { ReviewDetail } from '$lib/types/ReviewDetail';
import type { ReviewKind } from '$lib/types/ReviewKind';
import type { ReviewProgress } from '$lib/types/ReviewProgress';
import type { ReviewerRoute } from '$lib/types/ReviewerRoute';
import type { ReviewerSettings } from '$lib/types/ReviewerSettings';
import type { ReviewerTest } from '$lib/types/ReviewerTest';
import { store } from '../store.svelte';
import { call } from './call';

/** Starts a cold review of an assistant message (the latest reply when none is given), or of
 * the plan file at `path`. The
 * backend opens the Reviews tab and pushes progress; failures to start become toasts. */
export async function coldReview(sessionId: string, messageId?: string, path?: string): Promise<ReviewProgress> {
  const progress = await call({ cmd: 'coldReview', sessionId, ...(messageId ? { messageId } : {}), ...(path ? { path } : {}) });
  if (progress?.id) store.upsertReview(progress);
  return progress;
}

/** The ledger, newest first (in-app reviews and every gate's). Errors are not toasts: the
 * Reviews panel shows them. Later changes are pushed (`store.ledger`). */
export function listReviews(limit?: number): Promise<LedgerEntry[]> {
  return invoke({ cmd: 'listReviews', ...(limit ? { limit } : {}) });
}

/** One ledger row with the text it was reviewed on; null when it is gone. */
export function getReview(kind: ReviewKind, key: string): Promise<ReviewDetail | null> {
  return invoke({ cmd: 'getReview', kind, key });
}

/** The Reviewer settings (route, floor model, which direct keys are there), from the user's
 * review.json. */
export function reviewerSettings(): Promise<ReviewerSettings> {
  return invoke({ cmd: 'reviewerSettings' });
}

/** Saves route and floor into the user's review.json (the gate reads it too); toasts on failure. */
export function saveReviewerSettings(route: ReviewerRoute, floorModel: string): Promise<ReviewerSettings> {
  return call({ cmd: 'setReviewerSettings', route, floorModel });
}

/** Runs a tiny review through the configured route; nothing is recorded. The caller shows
 * the outcome (and the error, in one sentence). */
export function testReviewer(): Promise<ReviewerTest> {
  return invoke({ cmd: 'testReviewer' });
}
