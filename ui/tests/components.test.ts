import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';

const invoke = vi.fn();
vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return { ...actual, invoke: (...args: unknown[]) => invoke(...args), copyText: vi.fn(async () => undefined) };
});

const { default: MessageItem } = await import('$lib/components/MessageItem.svelte');
const { MessageView } = await import('$lib/state/transcript.svelte');
const { toasts } = await import('$lib/state/toasts.svelte');
const { transferDirectionOf, groupSessions } = await import('$lib/sessions');
const { setLocale } = await import('$lib/i18n/index.svelte');

type Part = import('$lib/types/Part').Part;

function assistant(parts: Partial<Part>[]) {
  return new MessageView(
    { id: 'msg_1', sessionID: 'ses_review', role: 'assistant', time: { created: 1, completed: 2 } },
    parts.map((p, i) => ({ id: `prt_${i}`, sessionID: 'ses_review', messageID: 'msg_1', type: 'text', synthetic: false, ignored: false, ...p })),
  );
}

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  invoke.mockReset();
  toasts.clear();
});

function render(props: Record<string, unknown>) {
  const target = document.createElement('div');
  document.body.appendChild(target);
  app = mount(MessageItem, { target, props: props as never });
  flushSync();
  return target;
}

describe('MessageItem', () => {
  it('renders assistant markdown without synthetic parts, with copy and transfer buttons', () => {
    setLocale('en');
    const el = render({ message: assistant([{ text: '**Findings**' }, { text: 'secret routing', synthetic: true }]), transferDirection: 'toImplementer' });
    const article = el.querySelector('[data-testid="message-assistant"]')!;
    expect(article.getAttribute('data-message-id')).toBe('msg_1');
    expect(article.querySelector('strong')?.textContent).toBe('Findings');
    expect(article.textContent).not.toContain('secret routing');
    const button = el.querySelector('[data-testid="transfer-button"]')!;
    expect(button.getAttribute('aria-label')).toBe('Send review feedback to implementing agent');
    expect(el.querySelector('[data-testid="copy-message"]')).not.toBeNull();
  });

  it('has no transfer button without a link or without visible text', () => {
    expect(render({ message: assistant([{ text: 'hello' }]), transferDirection: null }).querySelector('[data-testid="transfer-button"]')).toBeNull();
    document.body.innerHTML = '';
    const onlySynthetic = render({ message: assistant([{ text: 'hidden', synthetic: true }]), transferDirection: 'toReviewer' });
    expect(onlySynthetic.querySelector('[data-testid="transfer-button"]')).toBeNull();
  });

  it('transfers on click, with a spinner while sending and a success toast', async () => {
    let resolve: (v: unknown) => void = () => undefined;
    invoke.mockImplementation(() => new Promise((r) => (resolve = r)));
    const el = render({ message: assistant([{ text: 'response' }]), transferDirection: 'toReviewer' });
    const button = el.querySelector<HTMLButtonElement>('[data-testid="transfer-button"]')!;
    button.click();
    flushSync();
    expect(invoke).toHaveBeenCalledWith({ cmd: 'transfer', sessionId: 'ses_review', messageId: 'msg_1' });
    expect(button.disabled).toBe(true);
    expect(button.getAttribute('aria-busy')).toBe('true');
    resolve({ targetSessionId: 'ses_impl', direction: 'toReviewer', messageId: 'msg_2' });
    await vi.waitFor(() => expect(button.disabled).toBe(false));
    expect(toasts.items.map((t) => t.level)).toEqual(['success']);
  });

  it('shows a failed transfer as an error toast', async () => {
    invoke.mockRejectedValue({ code: 'no_linked_session', message: 'no link' });
    const el = render({ message: assistant([{ text: 'response' }]), transferDirection: 'toImplementer' });
    el.querySelector<HTMLButtonElement>('[data-testid="transfer-button"]')!.click();
    await vi.waitFor(() => expect(toasts.items).toHaveLength(1));
    expect(toasts.items[0]).toMatchObject({ level: 'error', text: 'This session has no linked session.', detail: 'no link' });
  });

  it('shows an assistant error', () => {
    const message = new MessageView({
      id: 'msg_e',
      sessionID: 's',
      role: 'assistant',
      time: { created: 1 },
      error: { name: 'ProviderAuthError', data: { message: 'bad key' } },
    });
    expect(render({ message }).querySelector('[data-testid="assistant-error"]')?.textContent).toContain('ProviderAuthError: bad key');
  });
});

describe('sessions', () => {
  const base = { slug: '', projectID: '', title: 't', time: { created: 0, updated: 0 } };
  it('derives the transfer direction from the openchamber metadata', () => {
    expect(transferDirectionOf({ ...base, id: 'r', directory: '/a', metadata: { openchamber: { kind: 'review', originalSessionID: 'o' } } })).toBe('toImplementer');
    expect(transferDirectionOf({ ...base, id: 'o', directory: '/a', metadata: { openchamber: { reviewSessionID: 'r' } } })).toBe('toReviewer');
    expect(transferDirectionOf({ ...base, id: 'x', directory: '/a', metadata: { openchamber: { kind: 'review' } } })).toBeNull();
    expect(transferDirectionOf({ ...base, id: 'y', directory: '/a' })).toBeNull();
  });

  it('groups by directory, newest first, hides archived and subagent sessions, filters by title', () => {
    const sessions = [
      { ...base, id: 'a', directory: '/p/one', title: 'Alpha', time: { created: 0, updated: 10 } },
      { ...base, id: 'b', directory: '/p/two', title: 'Beta', time: { created: 0, updated: 30 } },
      { ...base, id: 'c', directory: '/p/one', title: 'Gamma', time: { created: 0, updated: 20 } },
      { ...base, id: 'd', directory: '/p/one', title: 'Old', time: { created: 0, updated: 40, archived: 41 } },
      { ...base, id: 'e', directory: '/p/one', title: 'Child', parentID: 'a', time: { created: 0, updated: 50 } },
    ];
    const groups = groupSessions(sessions, {});
    expect(groups.map((g) => [g.name, g.sessions.map((s) => s.id)])).toEqual([
      ['two', ['b']],
      ['one', ['c', 'a']],
    ]);
    expect(groupSessions(sessions, { showArchived: true })[0].sessions.map((s) => s.id)).toEqual(['d', 'c', 'a']);
    expect(groupSessions(sessions, { query: 'gam' }).flatMap((g) => g.sessions.map((s) => s.id))).toEqual(['c']);
  });
});
