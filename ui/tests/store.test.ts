import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Store, sameAttention } from '$lib/state/store.svelte';
import { MessageView } from '$lib/state/transcript.svelte';
import type { Change } from '$lib/types/Change';
import type { MessageWithParts } from '$lib/types/MessageWithParts';
import type { Part } from '$lib/types/Part';
import type { PermissionRequest } from '$lib/types/PermissionRequest';
import type { Session } from '$lib/types/Session';
import type { Snapshot } from '$lib/types/Snapshot';
import type { OlderPage } from '$lib/types/OlderPage';
import type { Stamped } from '$lib/types/Stamped';
import type { TranscriptPage } from '$lib/types/TranscriptPage';

function session(id: string, over: Partial<Session> = {}): Session {
  return {
    id,
    slug: id,
    projectID: 'p',
    directory: '/home/dev/a',
    title: `Session ${id}`,
    time: { created: 1, updated: 1 },
    ...over,
  };
}

function snapshot(over: Partial<Snapshot> = {}): Snapshot {
  return {
    seq: 10,
    connection: { state: 'ready', url: 'http://127.0.0.1:4096', version: '1.0.0', managed: true },
    sessions: [session('s1'), session('s2')],
    statuses: { s2: { type: 'busy' } },
    permissions: [],
    settings: { theme: 'dark', locale: 'de', handoffTimeoutMs: 60_000, notifications: { reviewDone: true, permission: true, loopStopped: true, question: true, turnFailed: true, turnFinished: true, reviewStale: true, handoffFailed: true, sound: false }, reviewerReadOnly: true, reviewerShellAllow: [], loopBudget: {} },
    tabs: [],
    flows: [],
    sessionErrors: {},
    ...over,
  };
}

function part(id: string, messageId: string, text: string, over: Partial<Part> = {}): Part {
  return { id, sessionID: 's1', messageID: messageId, type: 'text', text, synthetic: false, ignored: false, ...over };
}

function message(id: string, role: string, parts: Part[] = []): MessageWithParts {
  return { info: { id, sessionID: 's1', role, time: { created: 1 } }, parts };
}

function page(seq: number, messages: MessageWithParts[], hasOlder = false): TranscriptPage {
  return { seq, sessionId: 's1', messages, hasOlder };
}

const at = (seq: number, change: Change): Stamped => ({ seq, change });

/** Animation frames the test runs by hand: the callbacks requested, in order. */
function stubFrames(): FrameRequestCallback[] {
  const frames: FrameRequestCallback[] = [];
  vi.stubGlobal('requestAnimationFrame', (cb: FrameRequestCallback) => {
    frames.push(cb);
    return frames.length;
  });
  vi.stubGlobal('cancelAnimationFrame', () => undefined);
  return frames;
}

describe('store: snapshot', () => {
  it('applies a snapshot', () => {
    const store = new Store();
    store.applySnapshot(snapshot());
    expect(store.ready).toBe(true);
    expect(store.seq).toBe(10);
    expect([...store.sessions.keys()]).toEqual(['s1', 's2']);
    expect(store.statusOf('s2')).toBe('busy');
    expect(store.statusOf('s1')).toBe('idle');
    expect(store.settings.theme).toBe('dark');
    expect(store.connection.state).toBe('ready');
  });

  it('restores tabs and the active tab, deduplicated', () => {
    const store = new Store();
    const tab = { mode: 'chat' as const, dedupeKey: 'session:s1', label: 'One', sessionId: 's1' };
    store.applySnapshot(snapshot({ tabs: [tab, { ...tab }], activeTab: 'session:s1' }));
    expect(store.tabs).toHaveLength(1);
    expect(store.activeTab).toBe('session:s1');
  });

  it('ignores changes not newer than the snapshot', () => {
    const store = new Store();
    store.applySnapshot(snapshot());
    store.enqueue([
      at(9, { type: 'sessionRemoved', sessionId: 's1' }),
      at(10, { type: 'sessionUpserted', session: session('old') }),
      at(11, { type: 'sessionUpserted', session: session('s3') }),
    ]);
    store.flush();
    expect(store.sessions.has('s1')).toBe(true);
    expect(store.sessions.has('old')).toBe(false);
    expect(store.sessions.has('s3')).toBe(true);
    expect(store.seq).toBe(11);
  });

  it('drops duplicate changes and applies out-of-order batches in seq order', () => {
    const store = new Store();
    store.applySnapshot(snapshot());
    store.enqueue([
      at(13, { type: 'status', sessionId: 's1', status: { type: 'idle' } }),
      at(12, { type: 'status', sessionId: 's1', status: { type: 'busy' } }),
      at(12, { type: 'status', sessionId: 's1', status: { type: 'busy' } }),
    ]);
    store.flush();
    expect(store.statusOf('s1')).toBe('idle');
  });

  it('sessionsReset replaces sessions and clears statuses not listed (no stuck busy)', () => {
    const store = new Store();
    store.applySnapshot(snapshot());
    expect(store.statusOf('s2')).toBe('busy');
    store.enqueue([at(11, { type: 'sessionsReset', sessions: [session('s2'), session('s4')], statuses: {}, permissions: [] })]);
    store.flush();
    expect([...store.sessions.keys()].sort()).toEqual(['s2', 's4']);
    expect(store.statusOf('s2')).toBe('idle');
  });

  it('keeps a session error until the next turn starts, and reports it once', () => {
    const store = new Store();
    const seen: string[] = [];
    store.hooks = { onSessionError: (id, e) => seen.push(`${id}: ${e.message}`) };
    store.applySnapshot(snapshot({ sessionErrors: { s1: { name: 'UnknownError', message: 'old' } } }));
    expect(store.sessionErrors.get('s1')?.message).toBe('old');
    expect(seen).toEqual([]);
    store.enqueue([at(11, { type: 'sessionError', sessionId: 's2', error: { name: 'UnknownError', message: 'Model not found: fake/nope.' } })]);
    store.flush();
    expect(store.sessionErrors.get('s2')?.message).toBe('Model not found: fake/nope.');
    expect(seen).toEqual(['s2: Model not found: fake/nope.']);
    store.enqueue([at(12, { type: 'status', sessionId: 's2', status: { type: 'busy' } })]);
    store.flush();
    expect(store.sessionErrors.has('s2')).toBe(false);
    store.enqueue([at(13, { type: 'sessionRemoved', sessionId: 's1' })]);
    store.flush();
    expect(store.sessionErrors.size).toBe(0);
  });

  it('replays changes that raced a snapshot fetch', () => {
    const store = new Store();
    store.beginFetch();
    // Arrives while the snapshot request is in flight, and is newer than the snapshot.
    store.enqueue([at(11, { type: 'sessionUpserted', session: session('s9') })]);
    store.flush();
    store.applySnapshot(snapshot({ seq: 10 }));
    store.endFetch();
    expect(store.sessions.has('s9')).toBe(true);
  });

  it('accepts a restarted backend after resetSequences', () => {
    const store = new Store();
    const notices: string[] = [];
    store.hooks = { onNotice: (n) => notices.push(n.code) };
    store.applySnapshot(snapshot({ seq: 500 }));
    store.enqueue([at(501, { type: 'notice', notice: { level: 'info', code: 'a', params: {}, message: 'a' } })]);
    store.flush();
    store.resetSequences();
    store.beginFetch();
    store.enqueue([at(3, { type: 'notice', notice: { level: 'info', code: 'b', params: {}, message: 'b' } })]);
    store.enqueue([at(4, { type: 'sessionUpserted', session: session('fresh') })]);
    store.flush();
    store.applySnapshot(snapshot({ seq: 2 }));
    store.endFetch();
    expect(notices).toEqual(['a', 'b']);
    expect(store.sessions.has('fresh')).toBe(true);
    expect(store.seq).toBe(4);
  });

  it('routes notices to the hook once per seq, and takes the tabs the backend pushes', () => {
    const store = new Store();
    const notices: string[] = [];
    let revealed = 0;
    store.hooks = { onNotice: (n) => notices.push(n.code), onTabsRevealed: () => revealed++ };
    store.applySnapshot(snapshot());
    const tab = { mode: 'chat' as const, dedupeKey: 'session:s2', label: 'Review', sessionId: 's2' };
    const other = { mode: 'reviews' as const, dedupeKey: 'reviews', label: 'Reviews' };
    const notice = { level: 'success' as const, code: 'notice.reviewStarted', params: {}, message: 'Review started' };
    store.enqueue([
      at(11, { type: 'notice', notice }),
      at(11, { type: 'notice', notice }),
      at(12, { type: 'tabs', tabs: [tab, tab], active: 'session:s2', reveal: true }),
    ]);
    store.flush();
    expect(store.tabs.map((t) => t.dedupeKey)).toEqual(['session:s2']);
    // A moved tab is not revealed; an active key that is gone falls back to the first tab.
    store.enqueue([at(13, { type: 'tabs', tabs: [other, tab], active: 'session:gone', reveal: false })]);
    store.flush();
    expect(notices).toEqual(['notice.reviewStarted']);
    expect(store.tabs.map((t) => t.dedupeKey)).toEqual(['reviews', 'session:s2']);
    expect(store.activeTab).toBe('reviews');
    expect(revealed).toBe(1);
  });

  it('tracks flows and when they ended', () => {
    let now = 1000;
    const store = new Store(() => now);
    store.applySnapshot(snapshot());
    const flow = { id: 'f1', sessionId: 's1', step: 'waitingForHandoff' as const, startedAt: 0, streamedChars: 5, callsWithoutText: 0, reused: false, ended: false };
    store.enqueue([at(11, { type: 'flow', flow })]);
    store.flush();
    expect(store.flows.get('f1')?.endedAt).toBeNull();
    now = 2000;
    store.enqueue([at(12, { type: 'flow', flow: { ...flow, step: 'done', ended: true } })]);
    store.flush();
    expect(store.flows.get('f1')?.endedAt).toBe(2000);
  });

  it('marks flows that had already ended in a snapshot as ended long ago', () => {
    const store = new Store(() => 5000);
    const done = { id: 'f2', sessionId: 's1', step: 'done' as const, startedAt: 0, streamedChars: 0, callsWithoutText: 0, reused: false, ended: true };
    const running = { ...done, id: 'f3', step: 'sendingReview' as const, ended: false };
    store.applySnapshot(snapshot({ flows: [done, running] }));
    expect(store.flows.get('f2')?.endedAt).toBe(0);
    expect(store.flows.get('f3')?.endedAt).toBeNull();
  });
});

describe('store: transcripts', () => {
  let store: Store;
  beforeEach(() => {
    store = new Store();
    store.applySnapshot(snapshot());
  });

  it('applies a page and then streamed deltas in place', () => {
    store.transcript('s1');
    store.applyPage(page(20, [message('m1', 'user', [part('p1', 'm1', 'hi')]), message('m2', 'assistant', [part('p2', 'm2', 'Hel')])]));
    const t = store.transcripts.get('s1')!;
    const m2 = t.message('m2')!;
    const p2 = m2.part('p2')!;
    const messagesBefore = t.messages;
    const partsBefore = m2.parts;

    store.enqueue([
      at(21, { type: 'partDelta', sessionId: 's1', messageId: 'm2', partId: 'p2', field: 'text', delta: 'lo' }),
      at(22, { type: 'partDelta', sessionId: 's1', messageId: 'm2', partId: 'p2', field: 'text', delta: ', world' }),
    ]);
    store.flush();

    expect(p2.text).toBe('Hello, world');
    // No copies: the message list and the part list are the same arrays, the part the same object.
    expect(t.messages).toBe(messagesBefore);
    expect(m2.parts).toBe(partsBefore);
    expect(m2.part('p2')).toBe(p2);
  });

  it('ignores transcript changes not newer than the page', () => {
    store.transcript('s1');
    store.applyPage(page(20, [message('m2', 'assistant', [part('p2', 'm2', 'Hello')])]));
    store.enqueue([
      at(19, { type: 'partDelta', sessionId: 's1', messageId: 'm2', partId: 'p2', field: 'text', delta: ' stale' }),
      at(20, { type: 'partDelta', sessionId: 's1', messageId: 'm2', partId: 'p2', field: 'text', delta: ' included' }),
      at(21, { type: 'partDelta', sessionId: 's1', messageId: 'm2', partId: 'p2', field: 'text', delta: '!' }),
    ]);
    store.flush();
    expect(store.transcripts.get('s1')!.message('m2')!.part('p2')!.text).toBe('Hello!');
  });

  it('tracks the page seq per session (one transcript does not filter another)', () => {
    store.transcript('s1');
    store.applyPage(page(50, [message('m1', 'assistant', [part('p1', 'm1', 'a')])]));
    store.transcript('s2');
    store.applyPage({ seq: 5, sessionId: 's2', hasOlder: false, messages: [] });
    store.enqueue([
      at(30, {
        type: 'messageUpserted',
        info: { id: 'x1', sessionID: 's2', role: 'assistant', time: { created: 1 } },
      }),
    ]);
    store.flush();
    expect(store.transcripts.get('s2')!.messages.map((m) => m.id)).toEqual(['x1']);
  });

  it('replays transcript changes that raced the page fetch', () => {
    store.transcript('s1');
    store.beginFetch();
    store.enqueue([at(21, { type: 'partDelta', sessionId: 's1', messageId: 'm2', partId: 'p2', field: 'text', delta: ' there' })]);
    store.flush(); // not loaded yet: nothing to apply to, but logged
    store.applyPage(page(20, [message('m2', 'assistant', [part('p2', 'm2', 'Hi')])]));
    store.endFetch();
    expect(store.transcripts.get('s1')!.message('m2')!.part('p2')!.text).toBe('Hi there');
  });

  it('upserts and removes messages and parts, keeping id order', () => {
    store.transcript('s1');
    store.applyPage(page(1, [message('m2', 'user'), message('m4', 'assistant')]));
    store.enqueue([
      at(2, { type: 'messageUpserted', info: { id: 'm3', sessionID: 's1', role: 'assistant', time: { created: 2 } } }),
      at(3, { type: 'messageUpserted', info: { id: 'm5', sessionID: 's1', role: 'user', time: { created: 3 } } }),
      at(4, { type: 'partUpserted', part: part('pb', 'm5', 'second') }),
      at(5, { type: 'partUpserted', part: part('pa', 'm5', 'first') }),
      at(6, { type: 'messageRemoved', sessionId: 's1', messageId: 'm2' }),
    ]);
    store.flush();
    const t = store.transcripts.get('s1')!;
    expect(t.messages.map((m) => m.id)).toEqual(['m3', 'm4', 'm5']);
    expect(t.message('m5')!.parts.map((p) => p.id)).toEqual(['pa', 'pb']);
    store.enqueue([at(7, { type: 'partRemoved', sessionId: 's1', messageId: 'm5', partId: 'pa' })]);
    store.flush();
    expect(t.message('m5')!.parts.map((p) => p.id)).toEqual(['pb']);
    expect(t.lastUserMessage()?.id).toBe('m5');
  });

  it('a delta for an unknown part creates it (header may come later)', () => {
    store.transcript('s1');
    store.applyPage(page(1, []));
    store.enqueue([at(2, { type: 'partDelta', sessionId: 's1', messageId: 'm9', partId: 'p9', field: 'text', delta: 'x' })]);
    store.flush();
    expect(store.transcripts.get('s1')!.message('m9')!.part('p9')!.text).toBe('x');
  });

  it('transcriptReset replaces the window and keeps surviving objects', () => {
    store.transcript('s1');
    store.applyPage(page(1, [message('m1', 'user', [part('p1', 'm1', 'a')]), message('m2', 'assistant')]));
    const m1 = store.transcripts.get('s1')!.message('m1');
    store.enqueue([at(5, { type: 'transcriptReset', page: page(5, [message('m1', 'user', [part('p1', 'm1', 'a')]), message('m3', 'assistant')]) })]);
    store.flush();
    const t = store.transcripts.get('s1')!;
    expect(t.messages.map((m) => m.id)).toEqual(['m1', 'm3']);
    expect(t.message('m1')).toBe(m1);
  });

  it('a page of the whole window reuses the loaded messages', () => {
    store.transcript('s1');
    store.applyPage(page(10, [message('m5', 'user'), message('m6', 'assistant')], true));
    const t = store.transcripts.get('s1')!;
    const m5 = t.message('m5');
    store.applyPage(page(10, [message('m3', 'user'), message('m4', 'assistant'), message('m5', 'user'), message('m6', 'assistant')], false));
    expect(t.messages.map((m) => m.id)).toEqual(['m3', 'm4', 'm5', 'm6']);
    expect(t.message('m5')).toBe(m5);
    expect(t.hasOlder).toBe(false);
  });

  it('an older page (only that page) goes in front and touches no loaded message', () => {
    store.transcript('s1');
    const newest = Array.from({ length: 50 }, (_, i) => message(`m${String(900 + i)}`, 'assistant', [part(`p${900 + i}`, `m${900 + i}`, 'x')]));
    store.applyPage(page(10, newest, true));
    const t = store.transcripts.get('s1')!;
    const m900 = t.message('m900')!;
    const loadedParts = m900.parts;
    const setParts = vi.spyOn(MessageView.prototype, 'setParts');
    // Pages 1..3 going back: each answer holds only its own 50 messages.
    for (let p = 1; p <= 3; p++) {
      const from = 900 - p * 50;
      const older: OlderPage = {
        seq: 10,
        sessionId: 's1',
        hasOlder: p < 3,
        messages: Array.from({ length: 50 }, (_, i) => message(`m${from + i}`, 'user', [part(`p${from + i}`, `m${from + i}`, 'o')])),
      };
      store.applyOlder(older);
    }
    expect(setParts).not.toHaveBeenCalled();
    setParts.mockRestore();
    expect(t.messages.length).toBe(200);
    expect(t.messages[0].id).toBe('m750');
    expect(t.messages[199].id).toBe('m949');
    expect(t.message('m900')).toBe(m900);
    expect(m900.parts).toBe(loadedParts);
    expect(t.message('m760')!.part('p760')!.text).toBe('o');
    expect(t.hasOlder).toBe(false);
  });

  it('an older page keeps the changes that came while it was fetched, applied once', () => {
    store.transcript('s1');
    store.applyPage(page(10, [message('m5', 'assistant', [part('p5', 'm5', 'Hel')])], true));
    const t = store.transcripts.get('s1')!;
    store.beginFetch();
    // While the older page is fetched: a delta to a loaded message and one to a message of the page.
    store.enqueue([
      at(11, { type: 'partDelta', sessionId: 's1', messageId: 'm5', partId: 'p5', field: 'text', delta: 'lo' }),
      at(12, { type: 'partDelta', sessionId: 's1', messageId: 'm3', partId: 'p3', field: 'text', delta: '!' }),
    ]);
    store.flush();
    store.applyOlder({ seq: 11, sessionId: 's1', hasOlder: false, messages: [message('m3', 'assistant', [part('p3', 'm3', 'old')])] });
    store.endFetch();
    expect(t.messages.map((m) => m.id)).toEqual(['m3', 'm5']);
    expect(t.message('m5')!.part('p5')!.text).toBe('Hello');
    expect(t.message('m3')!.part('p3')!.text).toBe('old!');
    expect(t.message('m3')!.info.role).toBe('assistant');
  });

  it('ignores changes for transcripts that are not open', () => {
    store.enqueue([at(11, { type: 'partDelta', sessionId: 'nope', messageId: 'm', partId: 'p', field: 'text', delta: 'x' })]);
    store.flush();
    expect(store.transcripts.has('nope')).toBe(false);
  });
});

describe('store: batching', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('applies queued changes together in a task of their own, a frame\'s time apart, and asks for no frame', () => {
    vi.useFakeTimers();
    const frames = stubFrames();
    let clock = 1_000;
    const store = new Store(() => clock);
    store.applySnapshot(snapshot());
    store.enqueue([at(11, { type: 'sessionUpserted', session: session('a') })]);
    store.enqueue([at(12, { type: 'sessionUpserted', session: session('b') })]);
    expect(store.sessions.has('a')).toBe(false);
    expect(store.pending).toBe(2);
    // The first batch goes in the next task.
    vi.advanceTimersByTime(0);
    expect(store.pending).toBe(0);
    expect(['a', 'b'].every((id) => store.sessions.has(id))).toBe(true);
    expect(store.flushes).toBe(1);
    // The next waits until a frame's time has passed since it.
    clock += 5;
    store.enqueue([at(13, { type: 'sessionUpserted', session: session('c') })]);
    store.enqueue([at(14, { type: 'sessionUpserted', session: session('d') })]);
    vi.advanceTimersByTime(11);
    expect(store.pending).toBe(2);
    vi.advanceTimersByTime(1);
    expect(store.pending).toBe(0);
    expect(store.flushes).toBe(2);
    // No animation frame was asked for: one asked for is drawn even when nothing changed.
    expect(frames).toHaveLength(0);
    // A wall clock set back an hour holds the next batch for a frame's time, not an hour.
    clock -= 3_600_000;
    store.enqueue([at(15, { type: 'sessionUpserted', session: session('e') })]);
    vi.advanceTimersByTime(17);
    expect(store.sessions.has('e')).toBe(true);
  });

  it('applies at once what changes a session\'s attention, with everything queued before it', () => {
    const frames = stubFrames();
    const store = new Store();
    store.applySnapshot(snapshot());
    const asked = { kind: 'permission' as const, since: 5, words: 'bash ls', requestId: 'per_1', questions: [] };
    store.enqueue([at(11, { type: 'status', sessionId: 's1', status: { type: 'busy' } })]);
    // The same session again with nothing new to ask: it waits for the frame.
    store.enqueue([at(12, { type: 'sessionUpserted', session: { ...session('s1'), title: 'Renamed', attention: [] } })]);
    expect(store.pending).toBe(2);
    store.enqueue([at(13, { type: 'sessionUpserted', session: { ...session('s1'), title: 'Renamed', attention: [asked] } })]);
    expect(store.pending).toBe(0);
    expect(store.statusOf('s1')).toBe('busy');
    expect(store.sessions.get('s1')?.attention).toEqual([asked]);
    // The same reasons pushed again are not news; an answered permission is.
    store.enqueue([at(14, { type: 'sessionUpserted', session: { ...session('s1'), title: 'Again', attention: [{ ...asked }] } })]);
    expect(store.pending).toBe(1);
    store.enqueue([at(15, { type: 'permissionResolved', sessionId: 's1', requestId: 'per_1' })]);
    expect(store.pending).toBe(0);
    expect(store.sessions.get('s1')?.title).toBe('Again');
  });

  it('tells attention lists apart by what they say', () => {
    const r = { kind: 'turnFinished' as const, since: 5, words: '', questions: [] };
    expect(sameAttention(undefined, [])).toBe(true);
    expect(sameAttention([r], [{ ...r }])).toBe(true);
    expect(sameAttention([r], [])).toBe(false);
    expect(sameAttention([r], [{ ...r, since: 6 }])).toBe(false);
    expect(sameAttention([r], [{ ...r, kind: 'turnFailed' }])).toBe(false);
    expect(sameAttention([r], [{ ...r, words: 'boom' }])).toBe(false);
    expect(sameAttention([r], [{ ...r, requestId: 'que_1' }])).toBe(false);
  });

  it('falls back to a timer when the window is hidden', () => {
    vi.useFakeTimers();
    const raf = vi.fn();
    vi.stubGlobal('requestAnimationFrame', raf);
    const hidden = vi.spyOn(document, 'hidden', 'get').mockReturnValue(true);
    const store = new Store();
    store.applySnapshot(snapshot());
    store.enqueue([at(11, { type: 'sessionUpserted', session: session('a') })]);
    expect(raf).not.toHaveBeenCalled();
    vi.advanceTimersByTime(60);
    expect(store.sessions.has('a')).toBe(true);
    hidden.mockRestore();
  });

  it('streams 100k deltas quickly with no per-delta transcript copies', () => {
    const store = new Store();
    store.applySnapshot(snapshot());
    store.transcript('s1');
    store.applyPage(page(10, [message('m1', 'assistant', [part('p1', 'm1', '')])]));
    const batch: Stamped[] = [];
    for (let i = 0; i < 100_000; i++) {
      batch.push(at(11 + i, { type: 'partDelta', sessionId: 's1', messageId: 'm1', partId: 'p1', field: 'text', delta: 'ab' }));
    }
    const start = performance.now();
    store.enqueue(batch);
    store.flush();
    const ms = performance.now() - start;
    expect(store.transcripts.get('s1')!.message('m1')!.part('p1')!.text.length).toBe(200_000);
    // A loose bound (shared CI machines are slow); it catches per-delta copying, not jitter.
    expect(ms).toBeLessThan(10_000);
  });
});

describe('store: cold reviews', () => {
  const progress = (status: 'running' | 'done' | 'failed') => ({
    id: 'rvw_1', sessionId: 's1', status, kind: 'plan' as const, key: 'k', source: 'message' as const, messageId: 'm1', startedAt: 5,
  });

  it('keeps pushed review progress, bumps the version, and never goes back to running', () => {
    const store = new Store();
    store.applySnapshot(snapshot());
    const v0 = store.reviewsVersion;
    store.enqueue([at(11, { type: 'review', review: progress('running') })]);
    store.flush();
    expect(store.runningReviewOf('m1')?.id).toBe('rvw_1');
    expect(store.reviewsVersion).toBe(v0 + 1);
    store.enqueue([at(12, { type: 'review', review: progress('done') })]);
    store.flush();
    expect(store.runningReviewOf('m1')).toBeUndefined();
    // The request that started it may answer after the pushed end.
    store.upsertReview(progress('running'));
    expect(store.reviews.get('rvw_1')?.status).toBe('done');
    expect(store.reviewsVersion).toBe(v0 + 2);
  });
});

function permission(id: string, sessionID: string, over: Partial<PermissionRequest> = {}): PermissionRequest {
  return {
    id,
    sessionID,
    permission: 'bash',
    patterns: ['git push origin main'],
    metadata: { command: 'git push origin main' },
    always: ['git push *'],
    tool: { messageID: 'm1', callID: 'call_1' },
    ...over,
  };
}

describe('store: permission requests', () => {
  it('takes pending permissions from the snapshot, grouped per session in id order', () => {
    const store = new Store();
    store.applySnapshot(snapshot({ permissions: [permission('per_2', 's1'), permission('per_3', 's2'), permission('per_1', 's1')] }));
    expect(store.permissionsOf('s1').map((p) => p.id)).toEqual(['per_1', 'per_2']);
    expect(store.permissionsOf('s2').map((p) => p.id)).toEqual(['per_3']);
    expect(store.permissionsOf('s3')).toEqual([]);
  });

  it('tolerates a snapshot without permissions (older backend)', () => {
    const store = new Store();
    const old = snapshot() as Partial<Snapshot>;
    delete old.permissions;
    store.applySnapshot(old as Snapshot);
    expect(store.permissions.size).toBe(0);
  });

  it('adds asked permissions and removes resolved ones, ignoring stale changes', () => {
    const store = new Store();
    store.applySnapshot(snapshot());
    store.enqueue([
      at(11, { type: 'permissionAsked', request: permission('per_1', 's1') }),
      at(12, { type: 'permissionAsked', request: permission('per_2', 's1', { permission: 'edit', patterns: ['src/a.ts'] }) }),
      at(10, { type: 'permissionAsked', request: permission('per_old', 's1') }),
    ]);
    store.flush();
    expect(store.permissionsOf('s1').map((p) => [p.id, p.permission])).toEqual([
      ['per_1', 'bash'],
      ['per_2', 'edit'],
    ]);
    store.enqueue([at(13, { type: 'permissionResolved', sessionId: 's1', requestId: 'per_1' })]);
    store.flush();
    expect(store.permissionsOf('s1').map((p) => p.id)).toEqual(['per_2']);
    // Resolving something unknown changes nothing.
    store.enqueue([at(14, { type: 'permissionResolved', sessionId: 's1', requestId: 'per_x' })]);
    store.flush();
    expect(store.permissions.size).toBe(1);
  });

  it('a sessions reset replaces the pending permissions (answered while away disappear)', () => {
    const store = new Store();
    store.applySnapshot(snapshot({ permissions: [permission('per_1', 's1'), permission('per_2', 's2')] }));
    store.enqueue([
      at(11, {
        type: 'sessionsReset',
        sessions: [session('s1'), session('s2')],
        statuses: {},
        permissions: [permission('per_2', 's2'), permission('per_3', 's1')],
      }),
    ]);
    store.flush();
    expect([...store.permissions.keys()].sort()).toEqual(['per_2', 'per_3']);
  });

  it('forgets the permissions of a removed session', () => {
    const store = new Store();
    store.applySnapshot(snapshot({ permissions: [permission('per_1', 's1'), permission('per_2', 's2')] }));
    store.enqueue([at(11, { type: 'sessionRemoved', sessionId: 's1' })]);
    store.flush();
    expect([...store.permissions.keys()]).toEqual(['per_2']);
  });
});
