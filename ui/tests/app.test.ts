// The whole app in jsdom against a scripted host: boot, snapshot, sidebar, chat, live changes.
import { flushSync, mount, tick, unmount } from 'svelte';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Request } from '$lib/types/Request';
import type { ReviewLink } from '$lib/types/ReviewLink';
import type { Snapshot } from '$lib/types/Snapshot';
import type { Stamped } from '$lib/types/Stamped';
import type { TranscriptPage } from '$lib/types/TranscriptPage';

let push: (changes: Stamped[]) => void = () => undefined;
const requests: Request[] = [];

const session = (id: string, title: string, directory: string, updated: number, link?: ReviewLink) => ({
  id,
  slug: id,
  projectID: 'p',
  directory,
  title,
  time: { created: 0, updated },
  ...(link ? { link } : {}),
});

const snapshot: Snapshot = {
  seq: 10,
  connection: { state: 'ready', url: 'http://127.0.0.1:4096', version: '1.18.33', managed: false },
  sessions: [
    session('ses_impl', 'Implement it', '/home/dev/proj', 100, { kind: 'original', otherSessionId: 'ses_rev', otherExists: true }),
    session('ses_rev', 'Review: Implement it', '/home/dev/proj', 200, { kind: 'review', otherSessionId: 'ses_impl', otherExists: true }),
    session('ses_other', 'Elsewhere', '/home/dev/other', 50),
  ],
  statuses: {},
  permissions: [],
  settings: { theme: 'light', locale: 'en', handoffTimeoutMs: 1_800_000, notifications: { reviewDone: true, permission: true, loopStopped: true, question: true, turnFailed: true, turnFinished: true, reviewStale: true, handoffFailed: true, sound: false }, reviewerReadOnly: true, reviewerShellAllow: [], loopBudget: {} },
  tabs: [],
  flows: [],
  sessionErrors: {},
};

/** A session of the snapshot, as the backend would push it again. */
const snapshotSession = (id: string) => snapshot.sessions.find((s) => s.id === id)!;

const page: TranscriptPage = {
  seq: 12,
  sessionId: 'ses_rev',
  hasOlder: false,
  messages: [
    {
      info: { id: 'msg_1', sessionID: 'ses_rev', role: 'user', time: { created: 1 } },
      parts: [{ id: 'prt_1', sessionID: 'ses_rev', messageID: 'msg_1', type: 'text', text: 'Please review', synthetic: false, ignored: false }],
    },
    {
      info: { id: 'msg_2', sessionID: 'ses_rev', role: 'assistant', time: { created: 2, completed: 3 } },
      parts: [{ id: 'prt_2', sessionID: 'ses_rev', messageID: 'msg_2', type: 'text', text: 'Looks', synthetic: false, ignored: false }],
    },
  ],
};

vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return {
    ...actual,
    invoke: async (request: Request) => {
      requests.push(request);
      switch (request.cmd) {
        case 'snapshot':
          return snapshot;
        case 'openSession':
          return page;
        case 'providers':
          return { providers: [], default: {} };
        case 'agents':
        case 'commands':
          return [];
        default:
          return null;
      }
    },
    subscribe: (onChanges: (c: Stamped[]) => void, onState?: (s: 'open' | 'lost') => void) => {
      push = onChanges;
      queueMicrotask(() => onState?.('open'));
      return () => undefined;
    },
  };
});

const { default: App } = await import('../src/App.svelte');

let app: ReturnType<typeof mount>;
const $ = (selector: string) => document.querySelector<HTMLElement>(selector);
const $$ = (selector: string) => [...document.querySelectorAll<HTMLElement>(selector)];

async function settle(ms = 0) {
  await vi.waitFor(async () => {
    await tick();
  });
  await new Promise((r) => setTimeout(r, ms));
  flushSync();
}

beforeAll(async () => {
  localStorage.clear();
  const target = document.createElement('div');
  document.body.appendChild(target);
  app = mount(App, { target });
  await vi.waitFor(() => expect($$('[data-testid="session-item"]')).toHaveLength(3));
  // The chat and the panel are scripts of their own, loaded once the list is up; here their
  // modules are compiled on first import, which takes a while: wait for them once.
  const { prefetchViews } = await import('$lib/views');
  await prefetchViews();
});

afterAll(() => unmount(app));

describe('App', () => {
  it('shows the connection and the sessions grouped by directory, newest first, each review under its implementer', () => {
    const status = $('[data-testid="server-status"]')!;
    expect(status.dataset.state).toBe('ready');
    expect(status.title).toContain('1.18.33');
    const groups = $$('[data-testid="session-group"]');
    expect(groups.map((g) => g.dataset.directory)).toEqual(['/home/dev/proj', '/home/dev/other']);
    // The review (newer) sits under its implementer, indented, not above it.
    expect($$('[data-testid="session-item"]').map((e) => e.dataset.sessionId)).toEqual(['ses_impl', 'ses_rev', 'ses_other']);
    expect($('[data-session-id="ses_rev"]')!.dataset.depth).toBe('1');
    expect($('[data-session-id="ses_impl"]')!.dataset.depth).toBe('0');
    expect($('[data-session-id="ses_rev"] [data-testid="review-badge"]')).not.toBeNull();
    expect($('[data-session-id="ses_impl"] [data-testid="review-badge"]')).toBeNull();
    expect(document.documentElement.dataset.theme).toBe('light');
  });

  it('opens a session and renders its transcript with a transfer button', async () => {
    $('[data-session-id="ses_rev"] button')!.click();
    await vi.waitFor(() => expect($('[data-testid="chat"] [data-testid="message-assistant"]')).not.toBeNull());
    expect($('[data-testid="chat"]')!.dataset.sessionId).toBe('ses_rev');
    expect(requests.some((r) => r.cmd === 'openSession' && r.sessionId === 'ses_rev')).toBe(true);
    expect($('[data-testid="message-user"]')!.textContent).toContain('Please review');
    expect($('[data-testid="transfer-button"]')!.getAttribute('aria-label')).toBe('Send review feedback to implementing agent');
  });

  it('applies pushed changes: deltas, statuses, notices', async () => {
    push([
      { seq: 13, change: { type: 'partDelta', sessionId: 'ses_rev', messageId: 'msg_2', partId: 'prt_2', field: 'text', delta: ' good to me' } },
      { seq: 14, change: { type: 'status', sessionId: 'ses_rev', status: { type: 'busy' } } },
      { seq: 15, change: { type: 'notice', notice: { level: 'error', code: 'notice.handoffFailed', params: { message: 'boom' }, message: 'Handoff failed: boom' } } },
    ]);
    await vi.waitFor(() => expect($('[data-testid="message-assistant"]')!.textContent).toContain('Looks good to me'));
    await settle();
    expect($('[data-session-id="ses_rev"] [data-testid="session-status"]')!.dataset.status).toBe('busy');
    expect($('[data-testid="abort"]')).not.toBeNull();
    const toast = $('[data-testid="toast"]')!;
    expect(toast.dataset.level).toBe('error');
    // One sentence of what happened and what to do; the server's words only behind Details.
    expect(toast.querySelector('[data-testid="toast-text"]')!.textContent).toBe(
      'The review handoff failed; its steps above the composer show where, and you can start it again.',
    );
    const detail = toast.querySelector<HTMLElement>('[data-testid="toast-detail"]')!;
    expect(detail.hidden).toBe(true);
    expect(detail.textContent).toBe('Handoff failed: boom');
    toast.querySelector<HTMLButtonElement>('[data-testid="toast-details"]')!.click();
    flushSync();
    expect(detail.hidden).toBe(false);
  });

  it('shows the tabs the backend pushes and never echoes them back', async () => {
    push([
      {
        seq: 16,
        change: {
          type: 'tabs',
          tabs: [{ mode: 'chat', dedupeKey: 'session:ses_impl', label: 'Implement it', sessionId: 'ses_impl', directory: '/home/dev/proj' }],
          active: 'session:ses_impl',
          reveal: true,
        },
      },
    ]);
    await vi.waitFor(() => expect($('[data-testid="context-tab"]')?.dataset.key).toBe('session:ses_impl'));
    await settle();
    expect(requests.some((r) => r.cmd === 'openTab' || r.cmd === 'activateTab')).toBe(false);
  });

  it('sends a prompt with Enter and keeps Shift+Enter for new lines', async () => {
    const input = $('[data-testid="chat"][data-session-id="ses_rev"] [data-testid="composer-input"]') as HTMLTextAreaElement;
    input.value = 'Thanks';
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', shiftKey: true, bubbles: true }));
    expect(requests.some((r) => r.cmd === 'sendPrompt')).toBe(false);
    input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    await vi.waitFor(() => expect(input.value).toBe(''));
    // The session is still busy (the test before): the prompt waits here, marked queued, and
    // goes out when the turn ends.
    await settle();
    expect($('[data-testid="composer-queued"]')?.textContent).toContain('Thanks');
    expect(requests.some((r) => r.cmd === 'sendPrompt')).toBe(false);
    push([{ seq: 17, change: { type: 'status', sessionId: 'ses_rev', status: { type: 'idle' } } }]);
    await vi.waitFor(() => expect(requests.find((r) => r.cmd === 'sendPrompt')).toMatchObject({ cmd: 'sendPrompt', sessionId: 'ses_rev', text: 'Thanks' }));
    await vi.waitFor(() => expect($('[data-testid="composer-queued"]')).toBeNull());
  });

  it('filters sessions by title', async () => {
    const search = $('[data-testid="session-search"]') as HTMLInputElement;
    search.value = 'elsew';
    search.dispatchEvent(new Event('input', { bubbles: true }));
    await settle();
    expect($$('[data-testid="session-item"]').map((e) => e.dataset.sessionId)).toEqual(['ses_other']);
    search.value = '';
    search.dispatchEvent(new Event('input', { bubbles: true }));
    await settle();
  });

  it('shows a permission request in the chat and the sidebar, and answers it', async () => {
    push([
      {
        seq: 20,
        change: {
          type: 'permissionAsked',
          request: {
            id: 'per_1',
            sessionID: 'ses_rev',
            permission: 'bash',
            patterns: ['git push origin main'],
            metadata: {},
            always: ['git push *'],
          },
        },
      },
      // The backend pushes the session again with the permission among its attention reasons:
      // the sidebar's mark and the "Needs you" list read that.
      {
        seq: 21,
        change: {
          type: 'sessionUpserted',
          session: {
            ...snapshotSession('ses_rev'),
            attention: [{ kind: 'permission', since: 5, words: 'bash git push origin main', requestId: 'per_1', questions: [] }],
          },
        },
      },
    ]);
    const card = () => $('[data-testid="chat"][data-session-id="ses_rev"] [data-testid="permission-request"]');
    await vi.waitFor(() => expect(card()).not.toBeNull());
    expect(card()!.textContent).toContain('bash');
    expect(card()!.textContent).toContain('git push origin main');
    expect($('[data-session-id="ses_rev"] [data-testid="session-permission"]')!.textContent).toContain('Needs permission');
    expect($('[data-testid="needs-you-item"][data-session-id="ses_rev"][data-kind="permission"]')!.textContent).toContain('bash git push origin main');
    const buttons = [...card()!.querySelectorAll<HTMLButtonElement>('button[data-reply]')];
    expect(buttons.map((b) => [b.dataset.reply, b.textContent?.trim()])).toEqual([
      ['once', 'Allow once'],
      ['always', 'Always allow'],
      ['reject', 'Reject'],
    ]);
    buttons[0].click();
    await vi.waitFor(() =>
      expect(requests.find((r) => r.cmd === 'replyPermission')).toEqual({
        cmd: 'replyPermission',
        sessionId: 'ses_rev',
        requestId: 'per_1',
        reply: 'once',
      }),
    );
    push([
      { seq: 22, change: { type: 'permissionResolved', sessionId: 'ses_rev', requestId: 'per_1' } },
      { seq: 23, change: { type: 'sessionUpserted', session: { ...snapshotSession('ses_rev'), attention: [] } } },
    ]);
    await vi.waitFor(() => expect(card()).toBeNull());
    expect($('[data-session-id="ses_rev"] [data-testid="session-permission"]')).toBeNull();
    expect($('[data-testid="needs-you-item"]')).toBeNull();
  });

  it('Alt+Up/Down step through the rows in the order the sidebar shows them (a review under its implementer)', async () => {
    $('[data-session-id="ses_impl"] button')!.click();
    await vi.waitFor(() => expect($('[data-testid="chat"]')!.dataset.sessionId).toBe('ses_impl'));
    const press = (key: string) => window.dispatchEvent(new KeyboardEvent('keydown', { key, altKey: true, bubbles: true }));
    press('ArrowDown');
    await vi.waitFor(() => expect($('[data-testid="chat"]')!.dataset.sessionId).toBe('ses_rev'));
    press('ArrowDown');
    await vi.waitFor(() => expect($('[data-testid="chat"]')!.dataset.sessionId).toBe('ses_other'));
    press('ArrowUp');
    await vi.waitFor(() => expect($('[data-testid="chat"]')!.dataset.sessionId).toBe('ses_rev'));
    press('ArrowUp');
    await vi.waitFor(() => expect($('[data-testid="chat"]')!.dataset.sessionId).toBe('ses_impl'));
  });
});
