// The app's actions: boot and resync, transcripts in use, and every command the UI sends.
// Errors become toasts here (localized by code) and are rethrown for callers that care.

import { HostError, invoke, subscribe } from '$lib/host';
import { t, tError, tNotice } from '$lib/i18n/index.svelte';
import type { FlowState } from '$lib/types/FlowState';
import type { LedgerEntry } from '$lib/types/LedgerEntry';
import type { ModelChoice } from '$lib/types/ModelChoice';
import type { PermissionReplyKind } from '$lib/types/PermissionReplyKind';
import type { PromptTemplate } from '$lib/types/PromptTemplate';
import type { Request } from '$lib/types/Request';
import type { ReviewDetail } from '$lib/types/ReviewDetail';
import type { ReviewKind } from '$lib/types/ReviewKind';
import type { ReviewProgress } from '$lib/types/ReviewProgress';
import type { Sent } from '$lib/types/Sent';
import type { Session } from '$lib/types/Session';
import type { Settings } from '$lib/types/Settings';
import type { Snapshot } from '$lib/types/Snapshot';
import type { Tab } from '$lib/types/Tab';
import type { TranscriptPage } from '$lib/types/TranscriptPage';
import type { TransferResult } from '$lib/types/TransferResult';
import { catalog } from './catalog.svelte';
import { store } from './store.svelte';
import { toasts } from './toasts.svelte';
import type { Transcript } from './transcript.svelte';
import { ui } from './ui.svelte';

/** Shows an error as a toast: the localized text for its code, the English message as detail. */
export function reportError(err: unknown): HostError {
  const e = HostError.from(err);
  toasts.push('error', tError(e.code), e.message);
  return e;
}

/** Sends a request; failures are reported as toasts and rethrown. */
export async function call<T>(request: Request): Promise<T> {
  try {
    return await invoke<T>(request);
  } catch (err) {
    throw reportError(err);
  }
}

// ---- boot and resync ----------------------------------------------------------------------

let unsubscribe: (() => void) | null = null;
let markStreamOpen: () => void = () => undefined;
/** Resolves once the change stream is open (or after a grace period without it). */
const streamOpen: Promise<void> = new Promise((resolve) => (markStreamOpen = resolve));
let snapshotTimer: ReturnType<typeof setTimeout> | null = null;
let snapshotBackoff = 1000;
let snapshotErrorShown = false;

export function boot(): () => void {
  store.hooks = {
    onNotice: (n) => toasts.push(n.level, tNotice(n.code, n.params, n.message), n.level === 'error' ? n.message : undefined),
    onTabsChanged: () => {
      ui.setPanelOpen(true);
      persistTabs();
    },
    onSessionRemoved: (id) => forgetSession(id),
  };
  // The snapshot is fetched once the stream is open, so no change falls between the two. If
  // state was fetched before (or the stream was lost meanwhile), everything is fetched again.
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
      const fetchedBefore = store.ready || [...store.transcripts.values()].some((t) => t.loaded);
      void (fetchedBefore ? resync() : loadSnapshot());
    },
  );
  return () => {
    unsubscribe?.();
    unsubscribe = null;
    if (fallback) clearTimeout(fallback);
    if (snapshotTimer) clearTimeout(snapshotTimer);
  };
}

export async function loadSnapshot(): Promise<void> {
  if (snapshotTimer) clearTimeout(snapshotTimer);
  snapshotTimer = null;
  store.beginFetch();
  try {
    const snapshot = await invoke<Snapshot>({ cmd: 'snapshot' });
    store.applySnapshot(snapshot);
    snapshotBackoff = 1000;
    snapshotErrorShown = false;
    if (ui.selectedSessionId && !store.sessions.has(ui.selectedSessionId)) ui.select(null);
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

// ---- transcripts in use -------------------------------------------------------------------

const refs = new Map<string, number>();
/** Released transcripts kept loaded for quick switching back, oldest first. */
const recent: string[] = [];
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

export function releaseTranscript(sessionId: string): void {
  const n = (refs.get(sessionId) ?? 0) - 1;
  if (n > 0) {
    refs.set(sessionId, n);
    return;
  }
  refs.delete(sessionId);
  recent.push(sessionId);
  while (recent.length > KEEP_RECENT) {
    const evict = recent.shift();
    if (evict === undefined || refs.has(evict)) continue;
    store.dropTranscript(evict);
    invoke<null>({ cmd: 'closeSession', sessionId: evict }).catch(() => undefined);
  }
}

export async function openTranscript(sessionId: string): Promise<void> {
  const transcript = store.transcripts.get(sessionId);
  if (!transcript) return;
  transcript.loading = true;
  transcript.error = null;
  await streamOpen;
  store.beginFetch();
  try {
    const page = await invoke<TranscriptPage>({ cmd: 'openSession', sessionId });
    if (store.transcripts.get(sessionId) === transcript) store.applyPage(page);
  } catch (err) {
    const e = HostError.from(err);
    transcript.error = e.code;
    if (e.code !== 'not_found') reportError(e);
  } finally {
    transcript.loading = false;
    store.endFetch();
  }
}

export async function loadOlder(sessionId: string): Promise<void> {
  const transcript = store.transcripts.get(sessionId);
  if (!transcript || !transcript.loaded || !transcript.hasOlder || transcript.loadingOlder) return;
  transcript.loadingOlder = true;
  store.beginFetch();
  try {
    const page = await invoke<TranscriptPage>({ cmd: 'loadOlder', sessionId });
    if (store.transcripts.get(sessionId) === transcript) store.applyPage(page);
  } catch (err) {
    reportError(err);
  } finally {
    transcript.loadingOlder = false;
    store.endFetch();
  }
}

// ---- sessions -----------------------------------------------------------------------------

export function selectSession(sessionId: string | null): void {
  ui.select(sessionId);
}

export async function createSession(directory: string, title?: string): Promise<Session> {
  const session = await call<Session>({ cmd: 'createSession', directory, ...(title ? { title } : {}) });
  ui.rememberDirectory(directory);
  if (session?.id) {
    if (!store.sessions.has(session.id)) store.sessions.set(session.id, session);
    ui.select(session.id);
  }
  return session;
}

export async function renameSession(sessionId: string, title: string): Promise<void> {
  const session = await call<Session>({ cmd: 'renameSession', sessionId, title });
  if (session?.id) store.sessions.set(session.id, session);
}

export async function archiveSession(sessionId: string, archived: boolean): Promise<void> {
  const session = await call<Session>({ cmd: 'archiveSession', sessionId, archived });
  if (session?.id) store.sessions.set(session.id, session);
}

export async function deleteSession(sessionId: string): Promise<void> {
  await call<null>({ cmd: 'deleteSession', sessionId });
  store.sessions.delete(sessionId);
  forgetSession(sessionId);
}

/** Clean-up after a session disappeared: its tab, its transcript, the selection. */
function forgetSession(sessionId: string): void {
  const key = sessionTabKey(sessionId);
  if (store.tabs.some((tab) => tab.dedupeKey === key)) {
    store.closeTab(key);
    persistTabs();
  }
  if (ui.selectedSessionId === sessionId) ui.select(null);
}

// ---- turns --------------------------------------------------------------------------------

function cleanChoice(choice: ModelChoice | undefined): ModelChoice | undefined {
  if (!choice) return undefined;
  const out: ModelChoice = {};
  if (choice.model?.providerID && choice.model.modelID) out.model = choice.model;
  if (choice.agent) out.agent = choice.agent;
  if (choice.variant) out.variant = choice.variant;
  return Object.keys(out).length ? out : undefined;
}

export function sendPrompt(sessionId: string, text: string, choice?: ModelChoice): Promise<Sent> {
  const c = cleanChoice(choice);
  return call<Sent>({ cmd: 'sendPrompt', sessionId, text, ...(c ? { choice: c } : {}) });
}

export function runCommand(sessionId: string, command: string, args: string, choice?: ModelChoice): Promise<Sent> {
  const c = cleanChoice(choice);
  return call<Sent>({ cmd: 'runCommand', sessionId, command, arguments: args, ...(c ? { choice: c } : {}) });
}

export function abort(sessionId: string): Promise<null> {
  return call<null>({ cmd: 'abort', sessionId });
}

/** Answers a pending permission request; the backend pushes its resolution. */
export function replyPermission(sessionId: string, requestId: string, reply: PermissionReplyKind): Promise<null> {
  return call<null>({ cmd: 'replyPermission', sessionId, requestId, reply });
}

export async function transfer(sessionId: string, messageId: string): Promise<TransferResult> {
  const result = await call<TransferResult>({ cmd: 'transfer', sessionId, messageId });
  toasts.push(
    'success',
    t(result.direction === 'toImplementer' ? 'notice.transferSent.toImplementer' : 'notice.transferSent.toReviewer'),
  );
  return result;
}

export async function startHandoffReview(sessionId: string, choice?: ModelChoice, reviewer?: ModelChoice): Promise<FlowState> {
  const c = cleanChoice(choice);
  const r = cleanChoice(reviewer);
  const flow = await call<FlowState>({
    cmd: 'startHandoffReview',
    sessionId,
    ...(c ? { choice: c } : {}),
    ...(r ? { reviewer: r } : {}),
  });
  if (flow?.id) store.enqueueLocalFlow(flow);
  return flow;
}

export function cancelFlow(flowId: string): Promise<null> {
  return call<null>({ cmd: 'cancelFlow', flowId });
}

// ---- cold reviews -------------------------------------------------------------------------

/** Starts a cold review of an assistant message (the latest reply when none is given). The
 * backend opens the Reviews tab and pushes progress; failures to start become toasts. */
export async function coldReview(sessionId: string, messageId?: string): Promise<ReviewProgress> {
  const progress = await call<ReviewProgress>({ cmd: 'coldReview', sessionId, ...(messageId ? { messageId } : {}) });
  if (progress?.id) store.upsertReview(progress);
  return progress;
}

/** The ledger, newest first (in-app reviews and every gate's). Errors are not toasts: the
 * Reviews panel shows them, and refreshes often. */
export function listReviews(limit?: number): Promise<LedgerEntry[]> {
  return invoke<LedgerEntry[]>({ cmd: 'listReviews', ...(limit ? { limit } : {}) });
}

/** One ledger row with the text it was reviewed on; null when it is gone. */
export function getReview(kind: ReviewKind, key: string): Promise<ReviewDetail | null> {
  return invoke<ReviewDetail | null>({ cmd: 'getReview', kind, key });
}

// ---- tabs ---------------------------------------------------------------------------------

export function sessionTabKey(sessionId: string): string {
  return `session:${sessionId}`;
}

export function sessionTab(session: Session): Tab {
  return {
    mode: 'chat',
    dedupeKey: sessionTabKey(session.id),
    label: session.title || t('sidebar.untitled'),
    directory: session.directory,
    sessionId: session.id,
  };
}

/** Key of the (single) Reviews tab. */
export const REVIEWS_TAB_KEY = 'reviews';

export function openInPanel(session: Session): void {
  store.openTab(sessionTab(session), true);
  ui.setPanelOpen(true);
  persistTabs();
}

export function openReviewsTab(): void {
  store.openTab({ mode: 'reviews', dedupeKey: REVIEWS_TAB_KEY, label: t('panel.reviews') }, true);
  ui.setPanelOpen(true);
  persistTabs();
}

export function closeTab(key: string): void {
  store.closeTab(key);
  persistTabs();
}

export function activateTab(key: string): void {
  store.activeTab = key;
  persistTabs();
}

export function moveTab(key: string, toIndex: number): void {
  store.moveTab(key, toIndex);
  persistTabs();
}

let tabsTimer: ReturnType<typeof setTimeout> | null = null;

/** Saves tab order and the active tab (debounced). */
export function persistTabs(): void {
  if (tabsTimer) clearTimeout(tabsTimer);
  tabsTimer = setTimeout(() => {
    tabsTimer = null;
    const active = store.activeTab ?? undefined;
    call<null>({ cmd: 'setTabs', tabs: store.tabs, ...(active ? { active } : {}) }).catch(() => undefined);
  }, 150);
}

// ---- settings and prompts -----------------------------------------------------------------

export async function saveSettings(settings: Settings): Promise<void> {
  const saved = await call<Settings>({ cmd: 'setSettings', settings });
  store.settings = saved ?? settings;
}

export function listPrompts(): Promise<PromptTemplate[]> {
  return call<PromptTemplate[]>({ cmd: 'prompts' });
}

export function setPrompt(name: string, template: string): Promise<PromptTemplate> {
  return call<PromptTemplate>({ cmd: 'setPrompt', name, template });
}

export function resetPrompt(name: string): Promise<PromptTemplate> {
  return call<PromptTemplate>({ cmd: 'resetPrompt', name });
}

/** After the OpenCode server (re)connects: refresh pickers and commands. */
export function onServerReady(): void {
  catalog.refresh();
}
