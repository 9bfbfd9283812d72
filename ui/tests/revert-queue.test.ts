// What a user sees after "Revert to here" and around Stop: the token count, the todo dock, the
// Changes tab and the revert bar follow the revert point; prompts waiting behind a running turn
// are told apart from the one being answered, and Stop cancels them and gives their text back.
import { flushSync, mount, tick, unmount } from 'svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const invoke = vi.fn();
vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return { ...actual, invoke: (...args: unknown[]) => invoke(...args) };
});

const { default: ChangesPanel } = await import('$lib/components/changes/ChangesPanel.svelte');
const { default: TodoDock } = await import('$lib/components/chat/TodoDock.svelte');
const { default: RevertBar } = await import('$lib/components/chat/RevertBar.svelte');
const { store } = await import('$lib/state/store.svelte');
const { outbox } = await import('$lib/state/outbox.svelte');
const { MessageView } = await import('$lib/state/transcript.svelte');
const { setLocale } = await import('$lib/i18n/index.svelte');
const { sessionUsage } = await import('$lib/turns');
const { serverQueued, restoredDraft } = await import('$lib/queued');
const { stopTurn, flushOutbox } = await import('$lib/state/actions/turns');

type MessageWithParts = import('$lib/types/MessageWithParts').MessageWithParts;
type Change = import('$lib/types/Change').Change;

const DIR = '/home/user/project';

function msg(
  id: string,
  role: 'user' | 'assistant',
  opts: { parent?: string; text?: string; done?: boolean; tokens?: number; cost?: number; todos?: string[] } = {},
): MessageWithParts {
  const parts: MessageWithParts['parts'] = [];
  if (opts.text) parts.push({ id: `prt_${id}_t`, sessionID: 'ses_1', messageID: id, type: 'text', text: opts.text } as never);
  if (opts.todos) {
    parts.push({
      id: `prt_${id}_todo`,
      sessionID: 'ses_1',
      messageID: id,
      type: 'tool',
      tool: 'todowrite',
      state: { status: 'completed', input: { todos: opts.todos.map((content) => ({ content, status: 'pending', priority: 'high' })) } },
    } as never);
  }
  return {
    info: {
      id,
      sessionID: 'ses_1',
      role,
      ...(opts.parent ? { parentID: opts.parent } : {}),
      time: { created: 1, ...(opts.done === false ? {} : { completed: 2 }) },
      ...(opts.tokens ? { tokens: { input: opts.tokens, output: 0, reasoning: 0, cache: { read: 0, write: 0 } }, cost: opts.cost ?? 0 } : {}),
    },
    parts,
  } as MessageWithParts;
}

const views = (list: MessageWithParts[]) => list.map((m) => new MessageView(m.info, m.parts));

let app: ReturnType<typeof mount> | null = null;
let seq = 5000;

function render(component: unknown, props: Record<string, unknown>) {
  const target = document.createElement('div');
  document.body.appendChild(target);
  app = mount(component as Parameters<typeof mount>[0], { target, props: props as never });
  flushSync();
  return target;
}

async function settle() {
  for (let i = 0; i < 5; i++) {
    await tick();
    await Promise.resolve();
  }
  flushSync();
}

function push(change: Change) {
  seq += 1;
  store.enqueue([{ seq, change }]);
  store.flush();
  flushSync();
}

beforeEach(() => {
  setLocale('en');
  localStorage.clear();
  store.connection = { state: 'ready', url: 'http://127.0.0.1:1', version: '1.18.33', managed: false } as never;
  store.sessions.set('ses_1', { id: 'ses_1', title: 'Work', directory: DIR } as never);
});

afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  invoke.mockReset();
  store.transcripts.delete('ses_1');
  store.todos.delete('ses_1');
  store.statuses.delete('ses_1');
  while (outbox.items.length) outbox.take(outbox.items[0].id);
});

// Two turns: the second is reverted (its user message is msg_3).
const twoTurns = () => [
  msg('msg_1', 'user', { text: 'Plan the parser' }),
  msg('msg_2', 'assistant', { parent: 'msg_1', tokens: 100, cost: 0.1, todos: ['Write the lexer'] }),
  msg('msg_3', 'user', { text: 'Now do it all' }),
  msg('msg_4', 'assistant', { parent: 'msg_3', tokens: 500, cost: 0.5, todos: ['Write the lexer', 'Write the parser', 'Ship it'] }),
  msg('msg_5', 'assistant', { parent: 'msg_3', tokens: 400, cost: 0.4 }),
];

describe('after Revert to here', () => {
  it("the session's tokens and cost leave out the reverted replies", () => {
    const messages = views(twoTurns());
    const server = { cost: 1.0, tokens: { input: 1000, output: 0, reasoning: 0, cache: { read: 0, write: 0 } } };
    const reverted = sessionUsage(server, messages, 'msg_3').usage;
    expect(reverted.tokens).toBe(100);
    expect(reverted.cost).toBeCloseTo(0.1, 6);
    expect(sessionUsage(undefined, messages, 'msg_3').usage.tokens).toBe(100);
    // Nothing reverted: the server's sum as it is.
    expect(sessionUsage(server, messages).usage.tokens).toBe(1000);
  });

  it('the todo dock shows the list as it stood at the revert point', async () => {
    invoke.mockResolvedValue([
      { content: 'Write the lexer', status: 'completed', priority: 'high' },
      { content: 'Write the parser', status: 'pending', priority: 'high' },
      { content: 'Ship it', status: 'pending', priority: 'high' },
    ]);
    store.transcript('ses_1').applyPage({ seq: 1, sessionId: 'ses_1', messages: twoTurns(), hasOlder: false });
    const target = render(TodoDock, { sessionId: 'ses_1' });
    await settle();
    expect(target.querySelectorAll('[data-testid="todo-item"]')).toHaveLength(3);
    push({ type: 'sessionUpserted', session: { id: 'ses_1', title: 'Work', directory: DIR, revert: { messageID: 'msg_3' } } as never });
    await settle();
    const items = [...target.querySelectorAll('[data-testid="todo-item"]')].map((i) => i.textContent?.trim());
    expect(items).toHaveLength(1);
    expect(items[0]).toContain('Write the lexer');
    // Reverted to the first prompt: no list was written before it.
    push({ type: 'sessionUpserted', session: { id: 'ses_1', title: 'Work', directory: DIR, revert: { messageID: 'msg_1' } } as never });
    await settle();
    expect(target.querySelector('[data-testid="todo-dock"]')).toBeNull();
  });

  it('the Changes tab asks again when the session is reverted and when Redo brings the turn back', async () => {
    invoke.mockResolvedValue({ scope: 'lastTurn', sessionId: 'ses_1', fromOriginal: false, directory: DIR, files: [] });
    localStorage.setItem('crosscheck.changes.scope', JSON.stringify('lastTurn'));
    render(ChangesPanel, { sessionId: 'ses_1' });
    await settle();
    expect(invoke).toHaveBeenCalledTimes(1);
    push({ type: 'sessionUpserted', session: { id: 'ses_1', title: 'Work', directory: DIR, revert: { messageID: 'msg_3' } } as never });
    await settle();
    expect(invoke).toHaveBeenCalledTimes(2);
    push({ type: 'sessionUpserted', session: { id: 'ses_1', title: 'Work', directory: DIR } as never });
    await settle();
    expect(invoke).toHaveBeenCalledTimes(3);
  });

  it('the revert bar counts the prompts undone, not every step of their replies', () => {
    const t = store.transcript('ses_1');
    t.applyPage({ seq: 1, sessionId: 'ses_1', messages: twoTurns(), hasOlder: false });
    const target = render(RevertBar, {
      session: { id: 'ses_1', title: 'Work', directory: DIR, revert: { messageID: 'msg_3' } },
      transcript: t,
      busy: false,
    });
    expect(target.querySelector('[data-testid="revert-summary"]')?.textContent).toContain('1 prompt and its reply reverted.');
  });
});

describe('prompts queued behind a running turn', () => {
  it('tells the prompts OpenCode holds from the one it is answering', () => {
    // The reply to msg_1 runs; msg_3 and msg_4 wait behind it.
    const running = views([
      msg('msg_1', 'user', { text: 'first' }),
      msg('msg_2', 'assistant', { parent: 'msg_1', done: false }),
      msg('msg_3', 'user', { text: 'second' }),
      msg('msg_4', 'user', { text: 'third' }),
    ]);
    expect(serverQueued(running).map((m) => m.id)).toEqual(['msg_3', 'msg_4']);
    // A prompt sent while the session was idle and its reply not created yet is not queued.
    const starting = views([
      msg('msg_1', 'user', { text: 'first' }),
      msg('msg_2', 'assistant', { parent: 'msg_1' }),
      msg('msg_3', 'user', { text: 'second' }),
      msg('msg_5', 'user', { text: 'third' }),
    ]);
    expect(serverQueued(starting).map((m) => m.id)).toEqual(['msg_5']);
    expect(serverQueued(views([msg('msg_1', 'user', { text: 'only' })]))).toEqual([]);
  });

  it('Stop cancels the prompts held here and there, and gives their text back', async () => {
    invoke.mockResolvedValue(null);
    store.statuses.set('ses_1', { type: 'busy' } as never);
    outbox.add({ sessionId: 'ses_1', text: 'held here', afterTurn: true });
    outbox.add({ sessionId: 'ses_other', text: 'another session' });
    const messages = views([
      msg('msg_1', 'user', { text: 'first' }),
      msg('msg_2', 'assistant', { parent: 'msg_1', done: false }),
      msg('msg_3', 'user', { text: 'held by the server' }),
    ]);
    const cancelled = await stopTurn('ses_1', messages);
    expect(invoke).toHaveBeenCalledWith({ cmd: 'abort', sessionId: 'ses_1' });
    expect(cancelled).toEqual(['held by the server', 'held here']);
    expect(outbox.items.map((q) => q.text)).toEqual(['another session']);
    expect(restoredDraft(cancelled, 'typing')).toBe('held by the server\n\nheld here\n\ntyping');
  });

  it('what was typed during a turn waits for the turn to end', async () => {
    const sent: string[] = [];
    invoke.mockImplementation(async (req: { cmd: string; text: string }) => {
      sent.push(req.text);
      return { messageId: 'm' };
    });
    store.statuses.set('ses_1', { type: 'busy' } as never);
    outbox.add({ sessionId: 'ses_1', text: 'after the turn', afterTurn: true });
    await flushOutbox();
    expect(sent).toEqual([]);
    store.statuses.delete('ses_1');
    await flushOutbox();
    expect(sent).toEqual(['after the turn']);
  });
});

describe('a Stop that fails', () => {
  it('cancels nothing: the held prompts stay queued, in order', async () => {
    invoke.mockRejectedValue({ code: 'opencode_unreachable', message: 'refused' });
    store.statuses.set('ses_1', { type: 'busy' } as never);
    outbox.add({ sessionId: 'ses_1', text: 'one', afterTurn: true });
    outbox.add({ sessionId: 'ses_1', text: 'two', afterTurn: true });
    await expect(stopTurn('ses_1', [])).rejects.toBeTruthy();
    expect(outbox.of('ses_1').map((q) => q.text)).toEqual(['one', 'two']);
  });
});
