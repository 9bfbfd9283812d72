// Boot and resync: the change stream, then the snapshot (in a browser a first one beside the
// stream, for the first frame) and every open transcript.

import { invoke, isDesktop, subscribe } from '$lib/host';
import { t, tNotice } from '$lib/i18n/index.svelte';
import { sessionTitle } from '$lib/titles';
import { catalog } from '../catalog.svelte';
import { store } from '../store.svelte';
import { toasts } from '../toasts.svelte';
import { ui } from '../ui.svelte';
import { reportError } from './call';
import { sessionChanged, startNotifications } from './notifications';
import { startSeeing } from './attention.svelte';
import { forgetSession } from './sessions';
import { markStreamOpen, openTranscript } from './transcripts';
import { flushOutbox } from './turns';
import { loadLoops } from './loops';
import { prefetchViews } from '$lib/views';

let unsubscribe: (() => void) | null = null;
let snapshotTimer: ReturnType<typeof setTimeout> | null = null;
let snapshotBackoff = 1000;
let snapshotErrorShown = false;
let warmedUp = false;

/** After the first snapshot, while the app is idle: the chat's and the panel's scripts are
 * loaded, then markdown's code is compiled, so the first session opened waits for neither (nor
 * does the first frame, which needs neither). */
function warmUpOnce(): void {
  if (warmedUp) return;
  warmedUp = true;
  const ric = (globalThis as { requestIdleCallback?: (cb: () => void, o?: { timeout: number }) => number }).requestIdleCallback;
  const later = typeof ric === 'function' ? (cb: () => void) => ric(cb, { timeout: 1000 }) : (cb: () => void) => setTimeout(cb, 0);
  later(() => {
    void prefetchViews()
      .then(() => import('$lib/markdown'))
      .then((markdown) => markdown.warmUpMarkdown())
      .catch(() => undefined);
  });
}

/** Starts following the backend; returns the function that stops it. */
export function boot(): () => void {
  store.hooks = {
    onNotice: (n) => toasts.push(n.level, tNotice(n.code, n.params, n.message), n.level === 'error' ? n.message : undefined),
    onTabsRevealed: () => ui.setPanelOpen(true),
    onSessionRemoved: (id) => forgetSession(id),
    onSessionError: (id, error) =>
      toasts.push('error', t('session.errorToast', { title: sessionTitle(store.sessions.get(id)) }), error.message),
    onTurnFinished: () => {
      // What was typed while the agent worked goes out now.
      void flushOutbox();
    },
    onSessionUpserted: (session, before) => sessionChanged(session, before),
  };
  startNotifications();
  const stopSeeing = startSeeing();
  // The snapshot is fetched once the stream is open, so no change falls between the two. If
  // state was fetched before (or the stream was lost meanwhile), everything is fetched again.
  // In a browser the stream takes a while to report itself open (the page is still busy
  // starting), so a first snapshot is asked at once for the first frame, and asked again once
  // the stream is open (what changed between the two comes with the second).
  let early: Promise<void> | null = isDesktop ? null : earlySnapshot();
  let fallback: ReturnType<typeof setTimeout> | null = setTimeout(() => {
    fallback = null;
    markStreamOpen();
    if (!store.ready) void loadSnapshot();
  }, 2500);
  unsubscribe = subscribe(
    (changes) => store.enqueue(changes),
    (state) => {
      if (state === 'lost') {
        ui.streamLost = true;
        return;
      }
      ui.streamLost = false;
      if (fallback) clearTimeout(fallback);
      fallback = null;
      markStreamOpen();
      if (early) {
        const first = early;
        early = null;
        // After the first one: two snapshots in flight could land out of order.
        void first.then(() => loadSnapshot());
        return;
      }
      const fetchedBefore = store.ready || [...store.transcripts.values()].some((t) => t.loaded);
      void (fetchedBefore ? resync() : loadSnapshot());
    },
  );
  return () => {
    stopSeeing();
    unsubscribe?.();
    unsubscribe = null;
    if (fallback) clearTimeout(fallback);
    if (snapshotTimer) clearTimeout(snapshotTimer);
  };
}

/** The snapshot asked before the stream is open, for the first frame; a failure is left to the
 * fetch that follows the stream's opening. */
async function earlySnapshot(): Promise<void> {
  store.beginFetch();
  try {
    store.applySnapshot(await invoke({ cmd: 'snapshot' }));
    warmUpOnce();
  } catch {
    // asked again once the stream is open
  } finally {
    store.endFetch();
  }
}

/** Fetches the snapshot; a failure is shown once and the fetch retried with backoff. */
export async function loadSnapshot(): Promise<void> {
  if (snapshotTimer) clearTimeout(snapshotTimer);
  snapshotTimer = null;
  store.beginFetch();
  try {
    const snapshot = await invoke({ cmd: 'snapshot' });
    store.applySnapshot(snapshot);
    warmUpOnce();
    // Loops are not in the snapshot: they come with their own request, then as changes.
    void loadLoops().catch(() => {});
    snapshotBackoff = 1000;
    snapshotErrorShown = false;
    // A session selected before a restart stays selected while the server is still starting
    // (its sessions are not listed yet); only a connected server's list can say it is gone.
    if (snapshot.connection.state === 'ready' && ui.selectedSessionId && !store.sessions.has(ui.selectedSessionId)) {
      ui.select(null);
    }
  } catch (err) {
    if (!snapshotErrorShown) {
      snapshotErrorShown = true;
      reportError(err);
    }
    snapshotTimer = setTimeout(() => void loadSnapshot(), snapshotBackoff);
    snapshotBackoff = Math.min(snapshotBackoff * 2, 15_000);
  } finally {
    store.endFetch();
  }
}

/** After the change stream was lost: the snapshot and every open transcript again. */
export async function resync(): Promise<void> {
  store.resetSequences();
  await loadSnapshot();
  await Promise.all([...store.transcripts.keys()].map((id) => openTranscript(id)));
}

/** After the OpenCode server (re)connects: refresh pickers and commands, reload the transcripts
 * whose loading failed while it was gone (the backend follows only those that loaded), and send
 * what was queued. */
export function onServerReady(): void {
  catalog.refresh();
  for (const [id, transcript] of store.transcripts) {
    if (transcript.error && transcript.error !== 'not_found' && !transcript.loading) void openTranscript(id);
  }
  void flushOutbox();
}
