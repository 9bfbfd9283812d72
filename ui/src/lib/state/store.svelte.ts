// The backend's state as the UI sees it: a snapshot, then stamped changes applied in order,
// batched once per animation frame (a change to what a session needs the person for is applied
// at once, with what was queued before it). Sequence numbers guard against stale and duplicate changes:
// a change only applies when it is newer than the snapshot (or, for transcripts, the page) it
// would overwrite. Changes that arrive while a snapshot or page is being fetched are logged and
// replayed on top of the fetched state, so nothing is lost in the race.

import { SvelteMap } from 'svelte/reactivity';
import type { LineComment } from '$lib/types/LineComment';
import { worktrees } from './worktrees.svelte';
import type { AttentionReason } from '$lib/types/AttentionReason';
import type { Change } from '$lib/types/Change';
import type { Connection } from '$lib/types/Connection';
import type { FindingsView } from '$lib/types/FindingsView';
import type { FlowState } from '$lib/types/FlowState';
import type { LedgerEntry } from '$lib/types/LedgerEntry';
import type { LoopState } from '$lib/types/LoopState';
import type { ReviewPin } from '$lib/types/ReviewPin';
import type { Notice } from '$lib/types/Notice';
import type { PermissionRequest } from '$lib/types/PermissionRequest';
import type { ReviewProgress } from '$lib/types/ReviewProgress';
import type { SessionFailure } from '$lib/types/SessionFailure';
import type { ServerView } from '$lib/types/ServerView';
import type { SessionView } from '$lib/types/SessionView';
import type { SessionStatus } from '$lib/types/SessionStatus';
import type { Settings } from '$lib/types/Settings';
import type { Snapshot } from '$lib/types/Snapshot';
import type { Stamped } from '$lib/types/Stamped';
import type { Tab } from '$lib/types/Tab';
import type { TransferRecord } from '$lib/types/TransferRecord';
import type { Todo } from '$lib/types/Todo';
import type { OlderPage } from '$lib/types/OlderPage';
import type { TranscriptPage } from '$lib/types/TranscriptPage';
import type { SearchProgress } from '$lib/types/SearchProgress';
import { Transcript, type PartView } from './transcript.svelte';

/** The least time between two batches of changes that are not urgent: a 60 Hz display's frame
 * (a stream's text deltas are drawn once a frame at most). */
const FRAME_MS = 1000 / 60;
/** The time between batches in a hidden window, which draws no frames. */
const HIDDEN_BATCH_MS = 50;

export const DEFAULT_SETTINGS: Settings = {
  theme: 'system',
  locale: '',
  handoffTimeoutMs: 30 * 60 * 1000,
  notifications: {
    reviewDone: true,
    permission: true,
    loopStopped: true,
    question: true,
    turnFailed: true,
    turnFinished: true,
    reviewStale: true,
    handoffFailed: true,
    sound: false,
  },
  // Until the snapshot says: read-only, with the backend's own list of allowed commands.
  reviewerReadOnly: true,
  reviewerShellAllow: [],
  loopBudget: {},
};

/** A flow and when the UI first saw it end (for showing the outcome briefly). */
export interface FlowView {
  flow: FlowState;
  /** null while running; 0 when it had ended before the UI saw it. */
  endedAt: number | null;
}

/** Side effects the store asks its owner to perform. */
export interface StoreHooks {
  onNotice?: (notice: Notice) => void;
  /** The backend opened or activated a tab: show the panel. */
  onTabsRevealed?: () => void;
  onSessionRemoved?: (sessionId: string) => void;
  /** A session's turn failed (pushed live, not from a snapshot): tell the user. */
  onSessionError?: (sessionId: string, error: SessionFailure) => void;
  /** A session's turn ended: busy (or retry) to idle, pushed live (not a snapshot or replay). */
  onTurnFinished?: (sessionId: string) => void;
  /** A session changed, pushed live (not a snapshot or replay), with how it was before: its
   * attention reasons tell what is new. */
  onSessionUpserted?: (session: SessionView, before: SessionView | undefined) => void;
}

type TranscriptChange = Extract<
  Change,
  { type: 'transcriptReset' | 'messageUpserted' | 'messageRemoved' | 'partUpserted' | 'partDelta' | 'partRemoved' }
>;

/** The session a transcript change belongs to, or null for other changes. */
export function transcriptSessionOf(change: Change): string | null {
  switch (change.type) {
    case 'transcriptReset':
      return change.page.sessionId;
    case 'messageUpserted':
      return change.info.sessionID;
    case 'partUpserted':
      return change.part.sessionID;
    case 'messageRemoved':
    case 'partDelta':
    case 'partRemoved':
      return change.sessionId;
    default:
      return null;
  }
}

/** The last `filesChanged` the store saw, numbered so that each one is a new value. */
export type FilesTouched = { serial: number; directory?: string; sessionId?: string };

export class Store {
  connection: Connection = $state.raw({ state: 'connecting' });
  /** Every OpenCode server followed, by id (the main one is `main`). */
  readonly servers = new SvelteMap<string, ServerView>();
  readonly sessions = new SvelteMap<string, SessionView>();
  /** Non-idle statuses. */
  readonly statuses = new SvelteMap<string, SessionStatus>();
  /** Pending permission requests, by request id. */
  readonly permissions = new SvelteMap<string, PermissionRequest>();
  /** The last error of sessions whose last turn failed, until their next turn starts. */
  readonly sessionErrors = new SvelteMap<string, SessionFailure>();
  settings: Settings = $state.raw(DEFAULT_SETTINGS);
  tabs: Tab[] = $state.raw([]);
  activeTab: string | null = $state(null);
  /** The newest transcript search's progress (Ctrl+K inside transcripts). */
  search: SearchProgress | null = $state.raw(null);
  /** Key of the tab that follows the selected session (its partner); the others are pinned. */
  followTab: string | null = $state(null);
  readonly flows = new SvelteMap<string, FlowView>();
  /** In-app cold reviews seen since the UI started, by run id. */
  readonly reviews = new SvelteMap<string, ReviewProgress>();
  /** Review loops by the implementing session's id (the newest per pair). */
  readonly loops = new SvelteMap<string, LoopState>();
  /** Bumped whenever a cold review starts or ends: the Reviews list reloads on it. */
  reviewsVersion: number = $state(0);
  /** The ledger's newest rows as last pushed (null until a review or gate writes). */
  ledger: LedgerEntry[] | null = $state.raw(null);
  readonly transcripts = new SvelteMap<string, Transcript>();
  /** The person's line comments of each implementing session, as last listed or pushed. */
  readonly comments = new SvelteMap<string, LineComment[]>();
  /** The findings of each review link as last listed or pushed, by review session. */
  readonly findings = new SvelteMap<string, FindingsView>();
  /** Pushes of `findings` counted so far, and the count at each link's last push: a load
   * that started before a link's push must not replace what that push brought. */
  findingsPushes = 0;
  readonly findingsPushedAt = new Map<string, number>();
  /** What each review session's newest reply saw of the code, by review session. */
  readonly pins = new SvelteMap<string, ReviewPin>();
  /** The latest transfer of each sent assistant message, by that message's id. */
  readonly transfers = new SvelteMap<string, TransferRecord>();
  /** Todo lists of the sessions that have been shown, by session id (pushed whole). */
  readonly todos = new SvelteMap<string, Todo[]>();
  /** The last pushed `filesChanged` (Changes tabs that it concerns ask again). */
  filesTouched: FilesTouched = $state.raw({ serial: 0 });
  /** A snapshot has been applied. */
  ready: boolean = $state(false);

  /** Sequence number of the snapshot or newest non-transcript change applied. */
  seq = 0;
  hooks: StoreHooks = {};
  /** Applied batches (for tests and diagnostics). */
  flushes = 0;

  private queue: Stamped[] = [];
  /** When the last batch was applied (`now`'s clock): batches are a frame's time apart. */
  private lastFlushAt = Number.NEGATIVE_INFINITY;
  private timerId: ReturnType<typeof setTimeout> | null = null;
  private inflight = 0;
  private replayLog: Stamped[] = [];
  private lastNoticeSeq = 0;
  private readonly now: () => number;
  /** Consecutive text deltas for one part are joined and applied as one write. */
  private deltaView: PartView | null = null;
  private deltaText = '';

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  // ---- batching ---------------------------------------------------------------------------

  /** Queues changes; they are applied together in a task of their own, at most once a frame's
   * time ({@link FRAME_MS}), or at once (with everything queued before them) when one of them changes
   * what a session needs the person for: a row of "Needs you" must not wait a frame to be drawn. */
  enqueue(changes: Stamped[]): void {
    if (changes.length === 0) return;
    let urgent = false;
    for (const c of changes) {
      this.queue.push(c);
      if (!urgent && this.isUrgent(c.change)) urgent = true;
    }
    if (urgent) this.flush();
    else this.schedule();
  }

  /** Whether a change asks for the person: a permission asked or answered, or a session whose
   * attention reasons differ from the ones shown. */
  private isUrgent(change: Change): boolean {
    switch (change.type) {
      case 'permissionAsked':
      case 'permissionResolved':
        return true;
      case 'sessionUpserted':
        return !sameAttention(this.sessions.get(change.session.id)?.attention, change.session.attention);
      default:
        return false;
    }
  }

  /** Applies the queue on a timer, not in an animation frame: a frame asked for is a frame
   * drawn, even when the batch changes nothing on screen, and a change that comes just after it
   * (a permission request a few ms after the turn's other changes) then waits for the display's
   * next frame. A batch that changes the page is drawn at the next frame all the same. */
  private schedule(): void {
    if (this.timerId !== null) return;
    const hidden = typeof document !== 'undefined' && document.hidden;
    // Clamped to one frame's time: a wall clock set back must not hold the batch for as long.
    const untilDue = Math.ceil(this.lastFlushAt + FRAME_MS - this.now());
    const wait = hidden ? HIDDEN_BATCH_MS : Math.min(Math.ceil(FRAME_MS), Math.max(0, untilDue));
    this.timerId = setTimeout(() => this.flush(), wait);
  }

  /** Applies every queued change now. */
  flush(): void {
    if (this.timerId !== null) clearTimeout(this.timerId);
    this.timerId = null;
    if (this.queue.length === 0) return;
    this.lastFlushAt = this.now();
    const batch = this.queue;
    this.queue = [];
    this.flushes++;
    // Stamped changes normally arrive in order; sort defensively (stable for equal seqs).
    if (!isSortedBySeq(batch)) batch.sort((a, b) => a.seq - b.seq);
    for (const stamped of batch) this.apply(stamped, true);
    this.flushDelta();
  }

  private flushDelta(): void {
    if (this.deltaView === null) return;
    this.deltaView.text += this.deltaText;
    this.deltaView = null;
    this.deltaText = '';
  }

  /** Pending (not yet applied) changes. */
  get pending(): number {
    return this.queue.length;
  }

  // ---- fetch races --------------------------------------------------------------------------

  /** Call before requesting a snapshot or page; changes applied until `endFetch` are logged. */
  beginFetch(): void {
    this.inflight++;
  }

  endFetch(): void {
    this.inflight = Math.max(0, this.inflight - 1);
    if (this.inflight === 0) this.replayLog = [];
  }

  /** Before resyncing after the change stream was lost: the backend may have restarted and
   * numbers its changes from scratch, so forget the numbers seen (the snapshot and pages that
   * follow set them again). */
  resetSequences(): void {
    this.flush();
    this.seq = 0;
    this.lastNoticeSeq = 0;
    for (const t of this.transcripts.values()) t.seq = 0;
  }

  // ---- snapshot and pages -----------------------------------------------------------------

  applySnapshot(snapshot: Snapshot): void {
    this.flush();
    this.seq = snapshot.seq;
    this.connection = snapshot.connection;
    this.servers.clear();
    for (const server of snapshot.servers ?? []) this.servers.set(server.id, server);
    this.resetSessions(snapshot.sessions, snapshot.statuses, snapshot.permissions ?? []);
    this.sessionErrors.clear();
    for (const [id, error] of Object.entries(snapshot.sessionErrors ?? {})) {
      if (error) this.sessionErrors.set(id, error);
    }
    this.settings = snapshot.settings;
    this.applyTabs(snapshot.tabs, snapshot.activeTab ?? null, snapshot.followTab ?? null);
    const keep = new Set<string>();
    for (const flow of snapshot.flows) {
      keep.add(flow.id);
      if (flow.ended && !this.flows.has(flow.id)) {
        // Ended before this UI saw it: 0 marks "ended at an unknown time, long ago".
        this.flows.set(flow.id, { flow, endedAt: 0 });
      } else this.upsertFlow(flow);
    }
    for (const id of [...this.flows.keys()]) if (!keep.has(id)) this.flows.delete(id);
    this.ready = true;
    for (const stamped of this.replayLog) {
      if (stamped.seq > snapshot.seq && transcriptSessionOf(stamped.change) === null) this.apply(stamped, false);
    }
    this.flushDelta();
  }

  /** The transcript of a session, created empty when it is not loaded. */
  transcript(sessionId: string): Transcript {
    let t = this.transcripts.get(sessionId);
    if (!t) {
      t = new Transcript(sessionId);
      this.transcripts.set(sessionId, t);
    }
    return t;
  }

  /** Applies a fetched window (openSession), then the newer changes seen meanwhile. */
  applyPage(page: TranscriptPage): void {
    this.flush();
    const t = this.transcript(page.sessionId);
    // The page is authoritative at page.seq; whatever was applied after it is in the replay log.
    t.seq = 0;
    t.applyPage(page);
    for (const stamped of this.replayLog) {
      if (stamped.seq > page.seq && transcriptSessionOf(stamped.change) === page.sessionId) this.apply(stamped, false);
    }
    this.flushDelta();
  }

  /** Puts a `loadOlder` page in front of a loaded transcript, then replays the changes seen
   * meanwhile that concern the page's messages (the rest of the window is current already). */
  applyOlder(page: OlderPage): void {
    this.flush();
    const t = this.transcripts.get(page.sessionId);
    if (!t || !t.loaded) return;
    const touched = t.prependPage(page);
    for (const stamped of this.replayLog) {
      if (stamped.seq <= page.seq || transcriptSessionOf(stamped.change) !== page.sessionId) continue;
      const change = stamped.change as TranscriptChange;
      const id = messageOf(change);
      if (id !== null && touched.has(id)) applyTranscriptChange(t, change);
    }
  }

  /** Forgets a transcript the UI no longer shows. */
  dropTranscript(sessionId: string): void {
    this.transcripts.delete(sessionId);
  }

  // ---- changes ------------------------------------------------------------------------------

  private apply(stamped: Stamped, log: boolean): void {
    if (log && this.inflight > 0) this.replayLog.push(stamped);
    const change = stamped.change;
    const sessionId = transcriptSessionOf(change);
    if (sessionId !== null) {
      const t = this.transcripts.get(sessionId);
      // Not loaded (or still loading): the page will include it, or the replay log will.
      if (!t || !t.loaded || stamped.seq <= t.seq) return;
      t.seq = stamped.seq;
      if (change.type === 'partDelta') {
        if (change.field !== 'text') return;
        const view = t.deltaTarget(change.messageId, change.partId);
        if (view !== this.deltaView) {
          this.flushDelta();
          this.deltaView = view;
        }
        this.deltaText += change.delta;
        return;
      }
      this.flushDelta();
      applyTranscriptChange(t, change as TranscriptChange);
      return;
    }
    this.flushDelta();
    if (change.type === 'notice') {
      if (stamped.seq <= this.lastNoticeSeq) return;
      this.lastNoticeSeq = stamped.seq;
      this.hooks.onNotice?.(change.notice);
      return;
    }
    if (stamped.seq <= this.seq) return;
    this.seq = stamped.seq;
    switch (change.type) {
      case 'connection':
        this.connection = change.connection;
        break;
      case 'server':
        this.servers.set(change.server.id, change.server);
        break;
      case 'serverRemoved':
        this.servers.delete(change.serverId);
        break;
      case 'sessionsReset':
        this.resetSessions(change.sessions, change.statuses, change.permissions ?? []);
        break;
      case 'sessionUpserted': {
        const before = this.sessions.get(change.session.id);
        this.sessions.set(change.session.id, change.session);
        if (log) this.hooks.onSessionUpserted?.(change.session, before);
        break;
      }
      case 'sessionRemoved':
        this.sessions.delete(change.sessionId);
        this.statuses.delete(change.sessionId);
        this.sessionErrors.delete(change.sessionId);
        this.todos.delete(change.sessionId);
        for (const p of this.permissionsOf(change.sessionId)) this.permissions.delete(p.id);
        this.hooks.onSessionRemoved?.(change.sessionId);
        break;
      case 'status':
        if (isIdle(change.status)) {
          const wasRunning = this.statuses.has(change.sessionId);
          this.statuses.delete(change.sessionId);
          if (wasRunning && log) this.hooks.onTurnFinished?.(change.sessionId);
        } else {
          this.statuses.set(change.sessionId, change.status);
          // A new turn runs: the last one's error no longer describes the session.
          this.sessionErrors.delete(change.sessionId);
        }
        break;
      case 'sessionError': {
        // OpenCode reports one failed turn twice (the second time with a stack trace): tell the
        // user once per turn; the entry is cleared when the next turn starts.
        const first = !this.sessionErrors.has(change.sessionId);
        this.sessionErrors.set(change.sessionId, change.error);
        if (first) this.hooks.onSessionError?.(change.sessionId, change.error);
        break;
      }
      case 'permissionAsked':
        this.permissions.set(change.request.id, change.request);
        break;
      case 'permissionResolved':
        this.permissions.delete(change.requestId);
        break;
      case 'settings':
        this.settings = change.settings;
        break;
      case 'flow':
        this.upsertFlow(change.flow);
        break;
      case 'tabs':
        this.applyTabs(change.tabs, change.active ?? null, change.follow ?? null);
        if (change.reveal) this.hooks.onTabsRevealed?.();
        break;
      case 'search':
        this.applySearch(change.progress);
        break;
      case 'ledger':
        this.ledger = change.entries;
        break;
      case 'review':
        this.upsertReview(change.review);
        break;
      case 'transferred':
        this.recordTransfer(change.transfer);
        break;
      case 'transferDropped':
        if (this.transfers.get(change.sourceMessageId)?.sentMessageId === change.sentMessageId) {
          this.transfers.delete(change.sourceMessageId);
        }
        break;
      case 'loop':
        this.loops.set(change.state.originalSessionId, change.state);
        break;
      case 'filesChanged':
        this.filesTouched = {
          serial: this.filesTouched.serial + 1,
          ...(change.directory !== undefined ? { directory: change.directory } : {}),
          ...(change.sessionId !== undefined ? { sessionId: change.sessionId } : {}),
        };
        break;
      case 'todos':
        this.setTodos(change.sessionId, change.todos);
        break;
      case 'worktree':
        worktrees.settle(change.name, change.failure ?? null);
        break;
      case 'reviewPin':
        this.recordPin(change.pin);
        break;
      case 'comments':
        this.comments.set(change.sessionId, change.comments);
        break;
      case 'findings':
        this.findingsPushes += 1;
        this.findingsPushedAt.set(change.findings.reviewSessionId, this.findingsPushes);
        this.findings.set(change.findings.reviewSessionId, change.findings);
        break;
    }
  }

  /** The connection of the server a session lives on (the main one's when not known). */
  connectionOf(sessionId: string): Connection {
    const serverId = this.sessions.get(sessionId)?.serverId ?? 'main';
    return this.servers.get(serverId)?.connection ?? this.connection;
  }

  /** A review pin, unless a newer check of it is known. */
  recordPin(pin: ReviewPin): void {
    const prev = this.pins.get(pin.reviewSessionId);
    if (prev && prev.checkedAt > pin.checkedAt) return;
    this.pins.set(pin.reviewSessionId, pin);
  }

  /** A transfer (pushed, answered by the request, or listed): kept when it is the newest of its
   * message. */
  recordTransfer(record: TransferRecord): void {
    const prev = this.transfers.get(record.sourceMessageId);
    if (prev && prev.sentAt > record.sentAt) return;
    // The same send again: only news when it went from pending to sent.
    if (prev && prev.sentMessageId === record.sentMessageId && (record.pending || !prev.pending)) return;
    this.transfers.set(record.sourceMessageId, record);
  }

  /** Keeps a session's todo list (an empty one is kept too: the dock then hides). */
  setTodos(sessionId: string, todos: Todo[]): void {
    this.todos.set(sessionId, todos);
  }

  private resetSessions(
    sessions: SessionView[],
    statuses: { [key in string]?: SessionStatus },
    permissions: PermissionRequest[],
  ): void {
    const keep = new Set<string>();
    for (const s of sessions) {
      keep.add(s.id);
      if (this.sessions.get(s.id) !== s) this.sessions.set(s.id, s);
    }
    for (const id of [...this.sessions.keys()]) if (!keep.has(id)) this.sessions.delete(id);
    for (const id of [...this.sessionErrors.keys()]) if (!keep.has(id)) this.sessionErrors.delete(id);
    // Statuses are authoritative: anything not listed is idle (this is what un-sticks "busy").
    const busy = new Set<string>();
    for (const [id, status] of Object.entries(statuses)) {
      if (!status || isIdle(status)) continue;
      busy.add(id);
      this.statuses.set(id, status);
    }
    for (const id of [...this.statuses.keys()]) if (!busy.has(id)) this.statuses.delete(id);
    // Pending permissions are authoritative too: one answered while away disappears.
    const pending = new Set<string>();
    for (const p of permissions) {
      pending.add(p.id);
      if (this.permissions.get(p.id) !== p) this.permissions.set(p.id, p);
    }
    for (const id of [...this.permissions.keys()]) if (!pending.has(id)) this.permissions.delete(id);
  }

  /** A flow returned by a request: taken unless a pushed change already told us more. */
  enqueueLocalFlow(flow: FlowState): void {
    if (!this.flows.has(flow.id)) this.upsertFlow(flow);
  }

  /** A cold review's progress (pushed, or returned by the request that started it). A late
   * "running" never replaces an ended state. */
  upsertReview(review: ReviewProgress): void {
    const prev = this.reviews.get(review.id);
    if (prev && prev.status !== 'running' && review.status === 'running') return;
    this.reviews.set(review.id, review);
    this.reviewsVersion++;
  }

  /** The running cold review of an assistant message, if any. */
  runningReviewOf(messageId: string): ReviewProgress | undefined {
    for (const r of this.reviews.values()) if (r.messageId === messageId && r.status === 'running') return r;
    return undefined;
  }

  private upsertFlow(flow: FlowState): void {
    const prev = this.flows.get(flow.id);
    const ended = flow.ended;
    this.flows.set(flow.id, { flow, endedAt: ended ? (prev?.endedAt ?? this.now()) : null });
  }

  // ---- search -------------------------------------------------------------------------------

  /** A search's progress; an older search's is dropped. */
  applySearch(progress: SearchProgress): void {
    if (this.search && progress.searchId < this.search.searchId) return;
    this.search = progress;
  }

  // ---- tabs ---------------------------------------------------------------------------------

  /** The backend's tabs, as pushed; the active one falls back to the first. */
  private applyTabs(tabs: Tab[], active: string | null, follow: string | null = null): void {
    this.tabs = dedupeTabs(tabs);
    this.followTab = follow && this.tabs.some((t) => t.dedupeKey === follow) ? follow : null;
    this.activeTab = active && this.tabs.some((t) => t.dedupeKey === active) ? active : (this.tabs[0]?.dedupeKey ?? null);
  }

  // ---- queries ------------------------------------------------------------------------------

  /** Pending permission requests of a session, oldest first. */
  permissionsOf(sessionId: string): PermissionRequest[] {
    const list: PermissionRequest[] = [];
    for (const p of this.permissions.values()) if (p.sessionID === sessionId) list.push(p);
    return list.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Status kind of a session: `idle`, `busy`, `retry`, ... */
  statusOf(sessionId: string): string {
    const s = this.statuses.get(sessionId);
    return s && !isIdle(s) ? s.type : 'idle';
  }
}

function applyTranscriptChange(t: Transcript, change: TranscriptChange): void {
  switch (change.type) {
    case 'transcriptReset':
      t.applyPage(change.page);
      break;
    case 'messageUpserted':
      t.upsertMessage(change.info);
      break;
    case 'messageRemoved':
      t.removeMessage(change.messageId);
      break;
    case 'partUpserted':
      t.upsertPart(change.part);
      break;
    case 'partDelta':
      t.appendDelta(change.messageId, change.partId, change.field, change.delta);
      break;
    case 'partRemoved':
      t.removePart(change.messageId, change.partId);
      break;
  }
}

/** The message a transcript change concerns (null for a reset of the whole window). */
function messageOf(change: TranscriptChange): string | null {
  switch (change.type) {
    case 'messageUpserted':
      return change.info.id;
    case 'partUpserted':
      return change.part.messageID;
    case 'messageRemoved':
    case 'partDelta':
    case 'partRemoved':
      return change.messageId;
    default:
      return null;
  }
}

export function isIdle(status: SessionStatus): boolean {
  return status.type === 'idle' || status.type === '';
}

/** Whether two lists of attention reasons say the same (in the same order). */
export function sameAttention(a: AttentionReason[] | undefined, b: AttentionReason[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  if (x === y) return true;
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) {
    const r = x[i];
    const q = y[i];
    if (r.kind !== q.kind || r.since !== q.since || r.requestId !== q.requestId || r.words !== q.words || r.stop !== q.stop) return false;
    if (r.questions.length !== q.questions.length) return false;
  }
  return true;
}

function isSortedBySeq(list: Stamped[]): boolean {
  for (let i = 1; i < list.length; i++) if (list[i - 1].seq > list[i].seq) return false;
  return true;
}

function dedupeTabs(tabs: Tab[]): Tab[] {
  const seen = new Set<string>();
  return tabs.filter((t) => (seen.has(t.dedupeKey) ? false : (seen.add(t.dedupeKey), true)));
}

/** The app's one store. */
export const store = new Store();
