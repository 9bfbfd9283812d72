// Transcripts in use: shown ones are followed by the backend, a few recent ones kept loaded.

import { HostError, invoke } from '$lib/host';
import { store } from '../store.svelte';
import type { Transcript } from '../transcript.svelte';
import { reportError } from './call';
import { loadTransfers } from './handoff';

let resolveStreamOpen: () => void = () => undefined;
/** Resolves once the change stream is open (or after a grace period without it). */
const streamOpen: Promise<void> = new Promise((resolve) => (resolveStreamOpen = resolve));

/** Lets transcript fetches go ahead: the change stream is open (boot calls it). */
export function markStreamOpen(): void {
  resolveStreamOpen();
}

const refs = new Map<string, number>();
/** Released transcripts kept loaded for quick switching back, oldest first. */
const recent: string[] = [];
/** How many released transcripts stay loaded. */
export const KEEP_RECENT = 4;

/** Marks a session's transcript as shown, loading it when needed. Pair with `releaseTranscript`. */
export function acquireTranscript(sessionId: string): Transcript {
  refs.set(sessionId, (refs.get(sessionId) ?? 0) + 1);
  const i = recent.indexOf(sessionId);
  if (i >= 0) recent.splice(i, 1);
  const transcript = store.transcript(sessionId);
  if (!transcript.loaded && !transcript.loading) void openTranscript(sessionId);
  return transcript;
}

/** A view no longer shows the transcript; the oldest unshown ones beyond KEEP_RECENT go. */
export function releaseTranscript(sessionId: string): void {
  const n = (refs.get(sessionId) ?? 0) - 1;
  if (n > 0) {
    refs.set(sessionId, n);
    return;
  }
  refs.delete(sessionId);
  recent.push(sessionId);
  // After the views being torn down in this update are gone: the pair view swaps the main view
  // and the panel at once, and dropping a transcript mid-update let a closing view read it.
  if (!trimQueued) {
    trimQueued = true;
    setTimeout(trimRecent, 0);
  }
}

let trimQueued = false;

function trimRecent(): void {
  trimQueued = false;
  while (recent.length > KEEP_RECENT) {
    const evict = recent.shift();
    if (evict === undefined || refs.has(evict)) continue;
    store.dropTranscript(evict);
    invoke({ cmd: 'closeSession', sessionId: evict }).catch(() => undefined);
  }
}

/** Loads (or reloads) a transcript's newest page. */
export async function openTranscript(sessionId: string): Promise<void> {
  const transcript = store.transcripts.get(sessionId);
  if (!transcript) return;
  transcript.loading = true;
  transcript.error = null;
  await streamOpen;
  store.beginFetch();
  try {
    const page = await invoke({ cmd: 'openSession', sessionId });
    if (store.transcripts.get(sessionId) === transcript) {
      store.applyPage(page);
      void loadTransfers(sessionId);
    }
  } catch (err) {
    const e = HostError.from(err);
    transcript.error = e.code;
    if (e.code !== 'not_found') reportError(e);
  } finally {
    transcript.loading = false;
    store.endFetch();
  }
}

/** Loads the page before the oldest loaded message. */
export async function loadOlder(sessionId: string): Promise<void> {
  const transcript = store.transcripts.get(sessionId);
  if (!transcript || !transcript.loaded || !transcript.hasOlder || transcript.loadingOlder) return;
  transcript.loadingOlder = true;
  store.beginFetch();
  try {
    const page = await invoke({ cmd: 'loadOlder', sessionId });
    if (store.transcripts.get(sessionId) === transcript) store.applyOlder(page);
  } catch (err) {
    reportError(err);
  } finally {
    transcript.loadingOlder = false;
    store.endFetch();
  }
}
