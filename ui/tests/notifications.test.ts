// Notifications: when each kind is shown and what it says, that only live changes notify, and the
// web host's use of the browser's Notification API (permission on first use, click opens).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Notifier, type NotifierDeps, type NotifyKind } from '$lib/state/notifier';
import { Store } from '$lib/state/store.svelte';
import { onNotificationClick, sessionOfAction, showNotification } from '$lib/host/notifications';
import type { PermissionRequest } from '$lib/types/PermissionRequest';
import type { SessionView } from '$lib/types/SessionView';

const base = { slug: 's', projectID: 'p', directory: '/a', version: '1', time: { created: 1, updated: 2 } };
const review: SessionView = { ...base, id: 'ses_rev', title: 'Review: Login form', link: { kind: 'review', otherSessionId: 'ses_impl', otherExists: true } };
const impl: SessionView = { ...base, id: 'ses_impl', title: 'Login form', link: { kind: 'original', otherSessionId: 'ses_rev', otherExists: true } };

function permission(id: string, sessionID = 'ses_impl'): PermissionRequest {
  return { id, sessionID, permission: 'bash', patterns: ['rm -rf build'], metadata: {}, always: [] };
}

type Reason = import('$lib/types/AttentionReason').AttentionReason;

function reason(kind: Reason['kind'], over: Partial<Reason> = {}): Reason {
  return { kind, since: 100, words: '', questions: [], ...over };
}

/** The session as pushed with these reasons. */
function withReasons(session: SessionView, ...attention: Reason[]): SessionView {
  return { ...session, attention };
}

function harness({
  off = [],
  focused = false,
  screen = null,
  ...deps
}: Partial<Omit<NotifierDeps, 'focused'>> & { off?: NotifyKind[]; focused?: boolean; screen?: string | null } = {}) {
  const show = vi.fn(async () => true);
  const notifier = new Notifier({
    show,
    focused: () => focused,
    onScreen: (id) => id === screen,
    enabled: (kind) => !off.includes(kind),
    ...deps,
  });
  return { notifier, show };
}

describe('Notifier', () => {
  it('tells of a review whose turn finished while the window was not focused', () => {
    const { notifier, show } = harness();
    notifier.sessionChanged(withReasons(review, reason('turnFinished')), review);
    expect(show).toHaveBeenCalledExactlyOnceWith({
      title: 'Review finished',
      body: 'Review: Login form: the reviewer has replied.',
      sessionId: 'ses_rev',
      tag: 'review-done:ses_rev',
    });
  });

  it('stays quiet for a finished turn in a focused window, a reason already known, or the setting off', () => {
    const pushed = withReasons(review, reason('turnFinished'));
    for (const h of [harness({ focused: true }), harness({ off: ['reviewDone'] })]) {
      h.notifier.sessionChanged(pushed, review);
      expect(h.show).not.toHaveBeenCalled();
    }
    const h = harness();
    h.notifier.sessionChanged(pushed, pushed);
    expect(h.show).not.toHaveBeenCalled();
    // A session that is no review is told under its own setting.
    const other = harness({ off: ['turnFinished'] });
    other.notifier.sessionChanged(withReasons(impl, reason('turnFinished')), impl);
    expect(other.show).not.toHaveBeenCalled();
  });

  it('tells of a waiting permission once per request, unless its session is in front of a focused user', () => {
    const { notifier, show } = harness();
    const asked = withReasons(impl, reason('permission', { requestId: 'per_1', words: 'bash rm -rf build' }));
    notifier.sessionChanged(asked, impl);
    notifier.sessionChanged(asked, impl);
    expect(show).toHaveBeenCalledExactlyOnceWith({
      title: 'Permission needed',
      body: 'Login form waits for your answer: bash rm -rf build',
      sessionId: 'ses_impl',
      tag: 'permission:per_1',
    });
    const second = withReasons(impl, reason('permission', { requestId: 'per_2', words: 'bash ls' }));
    const inFront = harness({ focused: true, screen: 'ses_impl' });
    inFront.notifier.sessionChanged(second, impl);
    expect(inFront.show).not.toHaveBeenCalled();
    // In the side panel of a window that is not focused: told.
    const unfocused = harness({ focused: false, screen: 'ses_impl' });
    unfocused.notifier.sessionChanged(second, impl);
    expect(unfocused.show).toHaveBeenCalledOnce();
    const off = harness({ off: ['permission'] });
    off.notifier.sessionChanged(second, impl);
    expect(off.show).not.toHaveBeenCalled();
  });

  it('tells of a question with its words, and a stopped loop with its reason, unless turned off', () => {
    const { notifier, show } = harness();
    notifier.sessionChanged(withReasons(impl, reason('question', { requestId: 'que_1', words: 'Which branch?' })), impl);
    notifier.sessionChanged(withReasons(review, reason('loopStopped', { stop: 'stalled', words: 'F1 open three rounds' })), review);
    expect(show.mock.calls.map((c) => (c as unknown[])[0])).toEqual([
      { title: 'Question', body: 'Login form asks: Which branch?', sessionId: 'ses_impl', tag: 'question:que_1' },
      { title: 'Review loop stopped', body: 'Review: Login form: stalled: no progress', sessionId: 'ses_rev', tag: 'loop:ses_rev' },
    ]);
    const off = harness({ off: ['loopStopped', 'question'] });
    off.notifier.sessionChanged(withReasons(review, reason('loopEnded', { stop: 'clean' })), review);
    off.notifier.sessionChanged(withReasons(impl, reason('question', { requestId: 'que_2' })), impl);
    expect(off.show).not.toHaveBeenCalled();
  });

  it('plays the sound with each notification it shows', () => {
    const sound = vi.fn();
    const { notifier } = harness({ sound });
    notifier.sessionChanged(withReasons(impl, reason('turnFailed', { words: 'Model not found' })), impl);
    expect(sound).toHaveBeenCalledOnce();
  });
});

describe('store hooks for notifications', () => {
  const snapshot = (statuses: Record<string, { type: string }>, permissions: PermissionRequest[] = []) => ({
    seq: 10,
    connection: { state: 'connecting' as const },
    sessions: [review, impl],
    statuses,
    permissions,
    settings: { theme: 'system' as const, locale: '', handoffTimeoutMs: 1, notifications: { reviewDone: true, permission: true, loopStopped: true, question: true, turnFailed: true, turnFinished: true, reviewStale: true, handoffFailed: true, sound: false }, reviewerReadOnly: true, reviewerShellAllow: [], loopBudget: {} },
    tabs: [],
    flows: [],
    sessionErrors: {},
  });

  it('reports a turn that ended live, not what a snapshot or a replay says', () => {
    const store = new Store();
    const finished: string[] = [];
    store.hooks = { onTurnFinished: (id) => finished.push(id) };
    store.applySnapshot(snapshot({ ses_rev: { type: 'busy' } }, [permission('per_old')]));
    expect(finished).toEqual([]);

    store.enqueue([
      { seq: 11, change: { type: 'status', sessionId: 'ses_rev', status: { type: 'idle' } } },
      { seq: 12, change: { type: 'status', sessionId: 'ses_impl', status: { type: 'idle' } } }, // was not running
      { seq: 13, change: { type: 'permissionAsked', request: permission('per_new') } },
      { seq: 14, change: { type: 'permissionAsked', request: permission('per_old') } }, // already known
    ]);
    store.flush();
    expect(finished).toEqual(['ses_rev']);

    // Changes seen while a snapshot loads are replayed onto it: no second notification.
    store.beginFetch();
    store.enqueue([
      { seq: 15, change: { type: 'status', sessionId: 'ses_rev', status: { type: 'busy' } } },
      { seq: 16, change: { type: 'status', sessionId: 'ses_rev', status: { type: 'idle' } } },
    ]);
    store.flush();
    expect(finished).toEqual(['ses_rev', 'ses_rev']);
    store.applySnapshot({ ...snapshot({ ses_rev: { type: 'busy' } }), seq: 14 });
    store.endFetch();
    expect(finished).toEqual(['ses_rev', 'ses_rev']);
  });
});

describe('web host notifications', () => {
  const original = globalThis.Notification;
  afterEach(() => {
    globalThis.Notification = original;
  });

  /** A stand-in for the browser's Notification that records what was constructed. */
  function fakeNotification(permission: NotificationPermission, answer: NotificationPermission = permission) {
    const made: { title: string; options: NotificationOptions; instance: { onclick: (() => void) | null; close: () => void } }[] = [];
    const ask = vi.fn(async () => {
      Fake.permission = answer;
      return answer;
    });
    class Fake {
      static permission: NotificationPermission = permission;
      static requestPermission = ask;
      onclick: (() => void) | null = null;
      close = vi.fn();
      constructor(title: string, options: NotificationOptions) {
        made.push({ title, options, instance: this });
      }
    }
    globalThis.Notification = Fake as unknown as typeof Notification;
    return { made, ask };
  }

  it('asks for the permission on the first notification, shows it, and a click opens its session', async () => {
    const { made, ask } = fakeNotification('default', 'granted');
    const clicked: string[] = [];
    onNotificationClick((id) => clicked.push(id));
    const focus = vi.spyOn(window, 'focus').mockImplementation(() => undefined);
    expect(await showNotification({ title: 'Review finished', body: 'Login: replied', sessionId: 'ses_rev', tag: 't1' })).toBe(true);
    expect(ask).toHaveBeenCalledOnce();
    expect(made.map((m) => [m.title, m.options.body, m.options.tag])).toEqual([['Review finished', 'Login: replied', 't1']]);
    made[0].instance.onclick?.();
    expect(clicked).toEqual(['ses_rev']);
    expect(focus).toHaveBeenCalled();
    // Asked once: the second notification goes straight out.
    await showNotification({ title: 'B', body: 'b', sessionId: 'ses_impl', tag: 't2' });
    expect(ask).toHaveBeenCalledOnce();
    expect(made).toHaveLength(2);
  });

  it('shows nothing when the user said no', async () => {
    const { made } = fakeNotification('default', 'denied');
    expect(await showNotification({ title: 'A', body: 'a', sessionId: 's', tag: 't' })).toBe(false);
    expect(await showNotification({ title: 'A', body: 'a', sessionId: 's', tag: 't' })).toBe(false);
    expect(made).toEqual([]);
  });

  it('reads the browser\'s permission once, not for every notification (a synchronous call into the browser)', async () => {
    const { made } = fakeNotification('granted');
    let reads = 0;
    const Fake = globalThis.Notification as unknown as { permission: NotificationPermission };
    const value = Fake.permission;
    Object.defineProperty(Fake, 'permission', {
      configurable: true,
      get: () => {
        reads += 1;
        return value;
      },
    });
    for (const tag of ['t1', 't2', 't3']) await showNotification({ title: 'A', body: 'a', sessionId: 's', tag });
    expect(made).toHaveLength(3);
    expect(reads).toBe(1);
  });

  it('reads the permission again when the person changes it in the browser\'s site settings', async () => {
    const { made } = fakeNotification('denied');
    const Fake = globalThis.Notification as unknown as { permission: NotificationPermission };
    const heard: { change?: () => void } = {};
    const status = { addEventListener: (_: string, listener: () => void) => (heard.change = listener) };
    Object.defineProperty(navigator, 'permissions', { configurable: true, value: { query: async () => status } });
    try {
      expect(await showNotification({ title: 'A', body: 'a', sessionId: 's', tag: 't1' })).toBe(false);
      Fake.permission = 'granted';
      // Held until the browser says it changed.
      expect(await showNotification({ title: 'A', body: 'a', sessionId: 's', tag: 't2' })).toBe(false);
      expect(heard.change).toBeDefined();
      heard.change?.();
      expect(await showNotification({ title: 'A', body: 'a', sessionId: 's', tag: 't3' })).toBe(true);
      expect(made.map((m) => m.options.tag)).toEqual(['t3']);
    } finally {
      delete (navigator as { permissions?: unknown }).permissions;
    }
  });

  it('reads the session of a desktop click payload leniently', () => {
    expect(sessionOfAction({ actionId: 'tap', notification: { id: 3, extra: { sessionId: 'ses_x' } } })).toBe('ses_x');
    expect(sessionOfAction({ extra: { sessionId: 'ses_y' } })).toBe('ses_y');
    expect(sessionOfAction({ actionId: 'tap', notification: null })).toBeNull();
    expect(sessionOfAction('nope')).toBeNull();
  });
});
