// Boot and resync: the change stream, the snapshot, and every open transcript. In a browser the
// page's first script asks the snapshot (host/early.ts) while the app's script loads; when it
// has answered by then, it is applied before the app's first render. The stream's first event
// names the sequence number it starts after: a first snapshot at that number or later misses
// nothing, and no second one is asked.

import { invoke, isDesktop, subscribe } from '$lib/host';
import { peekEarlySnapshot, takeEarlySnapshot } from '$lib/host/early';
import { t, tNotice } from '$lib/i18n/index.svelte';
import { sessionTitle } from '$lib/titles';
import type { Snapshot } from '$lib/types/Snapshot';
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
import { whenIdle } from '$lib/frames';

let unsubscribe: (() => void) | null = null;
let snapshotTimer: ReturnType<typeof setTimeout> | null = null;
let snapshotBackoff = 1000;
let snapshotErrorShown = false;
let warmedUp = false;
/** The early snapshot applied before the app's first render (boot takes it from there). */
let appliedEarly: Snapshot | null = null;

/** After the first snapshot, while the app is idle: the chat's and the panel's scripts are
 * loaded, then markdown's code is compiled, so the first session opened waits for neither (nor
 * does the first frame, which needs neither). */
function warmUpOnce(): void {
  if (warmedUp) return;
  warmedUp = true;
  whenIdle(
    () =>
      void prefetchViews()
        .then(() => import('$lib/markdown'))
        .then((markdown) => markdown.warmUpMarkdown())
        .catch(() => undefined),
    1000,
    0,
  );
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
  // The first snapshot: the early one (web mode), else the one asked once the stream is open,
  // so no change falls between the two. If state was fetched before (or the stream was lost
  // meanwhile), everything is fetched again.
  let first: Promise<Snapshot | null> | null = isDesktop ? null : firstSnapshot();
  let fallback: ReturnType<typeof setTimeout> | null = setTimeout(() => {
    fallback = null;
    markStreamOpen();
    if (!store.ready) void loadSnapshot();
  }, 2500);
  unsubscribe = subscribe(
    (changes) => store.enqueue(changes),
    (state, from) => {
      if (state === 'lost') {
        ui.streamLost = true;
        return;
      }
      ui.streamLost = false;
      if (fallback) clearTimeout(fallback);
      fallback = null;
      markStreamOpen();
      if (first) {
        const pending = first;
        first = null;
        // After the first one (two snapshots in flight could land out of order), and only when
        // changes could have fallen between it and the stream's start.
        void pending.then((snapshot) => {
          if (!snapshot || from === undefined || snapshot.seq < from) return loadSnapshot();
        });
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

/** How long the app waits for the early snapshot before it shows itself without it (an empty
 * list, filled when the snapshot answers). */
export const EARLY_SNAPSHOT_WAIT_MS = 1000;

/** Resolves when the early snapshot has answered or failed, or after
 * `EARLY_SNAPSHOT_WAIT_MS`; at once when there is none. */
export async function awaitEarlySnapshot(): Promise<void> {
  const early = peekEarlySnapshot();
  if (!early || early.value || early.failed) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    early.promise.catch(() => undefined),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, EARLY_SNAPSHOT_WAIT_MS))),
  ]);
  clearTimeout(timer);
}

/** Applies the early snapshot when it has answered already: called before the app's first
 * render, so the sidebar is built once, with its rows. */
export function applyEarlySnapshot(): void {
  const early = peekEarlySnapshot();
  if (!early?.value) return;
  store.applySnapshot(early.value);
  appliedEarly = early.value;
}

/** The first snapshot in a browser: the early one (applied already, or applied when it
 * answers), else asked now. A failure answers null and is left to the fetch that follows the
 * stream's opening. */
async function firstSnapshot(): Promise<Snapshot | null> {
  const early = takeEarlySnapshot();
  if (early?.value && early.value === appliedEarly) {
    appliedEarly = null;
    afterSnapshot(early.value);
    return early.value;
  }
  store.beginFetch();
  try {
    const snapshot = await (early?.promise ?? invoke({ cmd: 'snapshot' }));
    store.applySnapshot(snapshot);
    afterSnapshot(snapshot);
    return snapshot;
  } catch {
    return null;
  } finally {
    store.endFetch();
  }
}

/** What follows every applied snapshot. */
function afterSnapshot(snapshot: Snapshot): void {
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
}

/** Fetches the snapshot; a failure is shown once and the fetch retried with backoff. */
export async function loadSnapshot(): Promise<void> {
  if (snapshotTimer) clearTimeout(snapshotTimer);
  snapshotTimer = null;
  store.beginFetch();
  try {
    const snapshot = await invoke({ cmd: 'snapshot' });
    store.applySnapshot(snapshot);
    afterSnapshot(snapshot);
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
