// Transcript search (Ctrl+K): the backend searches what it holds at once and reads the other
// transcripts in the background, pushing `search` changes the store applies.

import { store } from '../store.svelte';
import { call } from './call';

/** Shortest query searched inside transcripts (the backend's `MIN_QUERY_CHARS`). */
export const MIN_SEARCH_CHARS = 2;

/** Starts a transcript search; a query too short clears the results. */
export async function searchTranscripts(query: string): Promise<void> {
  const q = query.trim();
  if (q.length < MIN_SEARCH_CHARS) {
    store.search = null;
    return;
  }
  try {
    store.applySearch(await call({ cmd: 'searchTranscripts', query: q }));
  } catch {
    // reported as a toast
  }
}
