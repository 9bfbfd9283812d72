import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';

const invoke = vi.fn();
vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return { ...actual, invoke: (...args: unknown[]) => invoke(...args) };
});

const { toasts, AUTO_DISMISS_MS, ERROR_DISMISS_MS } = await import('$lib/state/toasts.svelte');
const { default: Toasts } = await import('$lib/components/common/Toasts.svelte');
const { default: TurnItem } = await import('$lib/components/chat/TurnItem.svelte');
const { default: TopBar } = await import('$lib/components/layout/TopBar.svelte');
const { MessageView } = await import('$lib/state/transcript.svelte');
const { store } = await import('$lib/state/store.svelte');
const { outbox } = await import('$lib/state/outbox.svelte');
const { flushOutbox } = await import('$lib/state/actions/turns');
const { onServerReady } = await import('$lib/state/actions/boot');
const { markStreamOpen } = await import('$lib/state/actions/transcripts');
const { getDraft } = await import('$lib/state/drafts');
const { isAbortError } = await import('$lib/parts');
const { setLocale } = await import('$lib/i18n/index.svelte');

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  toasts.clear();
  invoke.mockReset();
  vi.useRealTimers();
  while (outbox.items.length) outbox.take(outbox.items[0].id);
});

function render(component: any, props: Record<string, unknown> = {}) {
  const target = document.createElement('div');
  document.body.appendChild(target);
  app = mount(component as Parameters<typeof mount>[0], { target, props: props as never });
  flushSync();
  return target;
}

describe('toasts', () => {
  it('a repeat counts up on the toast already shown instead of stacking copies', () => {
    setLocale('en');
    const target = render(Toasts);
    toasts.push('error', 'Cannot reach the server; it retries.', 'connect refused (1)');
    toasts.push('info', 'Saved');
    toasts.push('error', 'Cannot reach the server; it retries.', 'connect refused (2)');
    toasts.push('error', 'Cannot reach the server; it retries.', 'connect refused (3)');
    flushSync();
    const shown = target.querySelectorAll('[data-testid="toast"]');
    expect(shown.length).toBe(2);
    const error = shown[0] as HTMLElement;
    expect(error.dataset.count).toBe('3');
    expect(error.querySelector('[data-testid="toast-count"]')!.textContent).toContain('×3');
    expect(error.querySelector('[data-testid="toast-detail"]')!.textContent).toBe('connect refused (3)');
  });

  it('errors expire too, a little later than the others; a repeat starts the time again', () => {
    vi.useFakeTimers();
    toasts.push('info', 'Saved');
    toasts.push('error', 'It failed; try again.');
    vi.advanceTimersByTime(AUTO_DISMISS_MS + 10);
    expect(toasts.items.map((t) => t.text)).toEqual(['It failed; try again.']);
    vi.advanceTimersByTime(ERROR_DISMISS_MS - AUTO_DISMISS_MS - 1000);
    toasts.push('error', 'It failed; try again.');
    vi.advanceTimersByTime(2000);
    expect(toasts.items.length).toBe(1);
    vi.advanceTimersByTime(ERROR_DISMISS_MS);
    expect(toasts.items).toEqual([]);
  });

  it('details stay closed until asked for, and an open toast does not expire', () => {
    vi.useFakeTimers();
    setLocale('en');
    const target = render(Toasts);
    toasts.push('error', 'The reply failed; the session shows why.', 'ProviderModelNotFoundError: fake/nope');
    flushSync();
    const detail = target.querySelector<HTMLElement>('[data-testid="toast-detail"]')!;
    const toggle = target.querySelector<HTMLButtonElement>('[data-testid="toast-details"]')!;
    expect(detail.hidden).toBe(true);
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    expect(target.querySelector('[data-testid="toast-text"]')!.textContent).not.toContain('ProviderModelNotFoundError');
    toggle.click();
    flushSync();
    expect(detail.hidden).toBe(false);
    vi.advanceTimersByTime(ERROR_DISMISS_MS * 3);
    expect(toasts.items.length).toBe(1);
    toggle.click();
    flushSync();
    vi.advanceTimersByTime(ERROR_DISMISS_MS + 10);
    expect(toasts.items).toEqual([]);
  });
});

describe('a stopped turn', () => {
  it('shows "Stopped", not an error', () => {
    setLocale('en');
    const aborted = { name: 'MessageAbortedError', data: { message: 'Aborted' } };
    expect(isAbortError(aborted)).toBe(true);
    expect(isAbortError({ name: 'UnknownError', data: { message: 'x' } })).toBe(false);
    const message = new MessageView(
      { id: 'msg_1', sessionID: 'ses_1', role: 'assistant', time: { created: 1, completed: 2 }, error: aborted },
      [{ id: 'prt_1', sessionID: 'ses_1', messageID: 'msg_1', type: 'text', text: 'Half a rep', synthetic: false, ignored: false }],
    );
    const target = render(TurnItem, { turn: { kind: 'turn', key: message.id, steps: [message], prompt: undefined } });
    expect(target.querySelector('[data-testid="assistant-stopped"]')!.textContent).toContain('Stopped');
    expect(target.querySelector('[data-testid="assistant-error"]')).toBeNull();
    expect(target.querySelector('[role="alert"]')).toBeNull();
  });
});

describe('the connection pill', () => {
  it('says why the server is gone and counts down to the next attempt', () => {
    vi.useFakeTimers();
    setLocale('en');
    const now = Date.now();
    store.connection = {
      state: 'reconnecting',
      url: 'http://127.0.0.1:4096',
      error: 'error sending request: connection refused',
      reason: 'unreachable',
      retryInMs: 4200,
      nextAttemptAt: now + 4200,
    };
    const target = render(TopBar);
    const pill = target.querySelector<HTMLElement>('[data-testid="server-status"]')!;
    expect(pill.dataset.state).toBe('reconnecting');
    expect(pill.dataset.reason).toBe('unreachable');
    expect(pill.classList.contains('down')).toBe(true);
    const label = () => target.querySelector('[data-testid="server-status-label"]')!.textContent;
    expect(label()).toBe('Server not reachable · retrying in 5 s');
    vi.advanceTimersByTime(2000);
    flushSync();
    expect(label()).toBe('Server not reachable · retrying in 3 s');
    vi.advanceTimersByTime(3000);
    flushSync();
    expect(label()).toBe('Server not reachable · retrying now…');
    expect(label()).not.toContain('127.0.0.1');
    store.connection = { state: 'connecting' };
  });
});

describe('messages typed while offline', () => {
  it('are sent in order once connected; one the server refuses goes back to the draft', async () => {
    store.connection = { state: 'ready', url: 'u', version: 'v', managed: false };
    outbox.add({ sessionId: 'ses_a', text: 'first' });
    outbox.add({ sessionId: 'ses_a', text: 'second' });
    outbox.add({ sessionId: 'ses_b', text: 'refused' });
    const sent: string[] = [];
    invoke.mockImplementation(async (req: { cmd: string; text: string }) => {
      if (req.text === 'refused') throw { code: 'not_found', message: 'session ses_b was not found' };
      sent.push(req.text);
      return { messageId: 'm' };
    });
    await flushOutbox();
    expect(sent).toEqual(['first', 'second']);
    expect(outbox.items).toEqual([]);
    expect(getDraft('ses_b')).toBe('refused');
    store.connection = { state: 'connecting' };
  });

  it('stay queued while the server is still gone', async () => {
    store.connection = { state: 'ready', url: 'u', version: 'v', managed: false };
    outbox.add({ sessionId: 'ses_a', text: 'later' });
    invoke.mockImplementation(async () => {
      store.connection = { state: 'connecting' };
      throw { code: 'opencode_unreachable', message: 'refused' };
    });
    await flushOutbox();
    expect(outbox.items.map((q) => q.text)).toEqual(['later']);
  });
});

describe('when the server is back', () => {
  it('reloads a transcript whose loading failed while it was gone', async () => {
    markStreamOpen();
    const failed = store.transcript('ses_failed');
    failed.error = 'opencode_unreachable';
    const gone = store.transcript('ses_gone');
    gone.error = 'not_found';
    const opened: string[] = [];
    invoke.mockImplementation(async (req: { cmd: string; sessionId?: string }) => {
      if (req.cmd === 'openSession' && req.sessionId) opened.push(req.sessionId);
      if (req.cmd === 'openSession') throw { code: 'opencode_unreachable', message: 'still gone' };
      return [];
    });
    onServerReady();
    await vi.waitFor(() => expect(opened).toEqual(['ses_failed']));
    store.dropTranscript('ses_failed');
    store.dropTranscript('ses_gone');
  });
});

describe('after a restart', () => {
  it('keeps the session selected before it while the server is still starting', async () => {
    const { loadSnapshot } = await import('$lib/state/actions/boot');
    const { ui } = await import('$lib/state/ui.svelte');
    const snapshot = (connection: unknown, sessions: unknown[]) => ({
      seq: 1,
      connection,
      sessions,
      statuses: {},
      permissions: [],
      settings: store.settings,
      tabs: [],
      flows: [],
      sessionErrors: {},
    });
    ui.select('ses_before');
    invoke.mockResolvedValue(snapshot({ state: 'connecting' }, []));
    await loadSnapshot();
    expect(ui.selectedSessionId).toBe('ses_before');
    // Connected, the server lists it: still selected.
    invoke.mockResolvedValue(snapshot({ state: 'ready', url: 'u', version: 'v', managed: true }, [{ id: 'ses_before', title: 'Kept', directory: '/p' }]));
    await loadSnapshot();
    expect(ui.selectedSessionId).toBe('ses_before');
    // Connected and not listed: it is gone.
    invoke.mockResolvedValue(snapshot({ state: 'ready', url: 'u', version: 'v', managed: true }, []));
    await loadSnapshot();
    expect(ui.selectedSessionId).toBeNull();
    store.connection = { state: 'connecting' };
  });
});
