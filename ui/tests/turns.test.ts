// A turn reads as one reply: the steps answering one prompt (recorded from the real server: ten
// steps with tool calls between them) group under one header with one action row, whose copy
// takes the whole turn's text and whose review and transfer name the turn.
import fs from 'node:fs';
import path from 'node:path';
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';

const invoke = vi.fn(async (..._args: unknown[]) => null as unknown);
const copyText = vi.fn(async (_text: string) => undefined);
vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return { ...actual, invoke: (...args: unknown[]) => invoke(...args), copyText: (text: string) => copyText(text) };
});

const { default: TurnItem } = await import('$lib/components/chat/TurnItem.svelte');
const { default: MessageList } = await import('$lib/components/chat/MessageList.svelte');
const { MessageView, Transcript } = await import('$lib/state/transcript.svelte');
const { groupRows, sessionUsage, turnText, turnUsage } = await import('$lib/turns');
const { setLocale } = await import('$lib/i18n/index.svelte');

type MessageWithParts = import('$lib/types/MessageWithParts').MessageWithParts;
type Turn = import('$lib/turns').Turn;

const fixture = JSON.parse(fs.readFileSync(path.resolve(__dirname, 'fixtures/tool-turn.json'), 'utf8')) as { messages: MessageWithParts[] };
const views = () => fixture.messages.map((m) => new MessageView(structuredClone(m.info), structuredClone(m.parts)));

function text(id: string, role: string, parentID: string | undefined, body: string, created = 1): MessageWithParts {
  return {
    info: { id, sessionID: 'ses_1', role, ...(parentID ? { parentID } : {}), time: { created, completed: created + 1 } },
    parts: [{ id: `prt_${id}`, sessionID: 'ses_1', messageID: id, type: 'text', text: body, synthetic: false, ignored: false }],
  };
}

let apps: ReturnType<typeof mount>[] = [];
afterEach(() => {
  for (const a of apps) unmount(a);
  apps = [];
  document.body.innerHTML = '';
  invoke.mockClear();
  copyText.mockClear();
});

describe('grouping', () => {
  it('puts the recorded steps answering one prompt into one turn', () => {
    const messages = views();
    expect(messages.filter((m) => m.info.role === 'assistant').every((m) => m.info.parentID === messages[0].id)).toBe(true);
    const rows = groupRows(messages);
    expect(rows.map((r) => r.kind)).toEqual(['message', 'turn']);
    const turn = rows[1] as Turn;
    expect(turn.steps).toHaveLength(10);
    expect(turn.key).toBe(messages[1].id);
    expect(turn.prompt).toBe(messages[0]);
  });

  it('starts a new turn at each prompt, and gives a parentless reply a turn of its own', () => {
    const list = [
      text('msg_1', 'user', undefined, 'one'),
      text('msg_2', 'assistant', 'msg_1', 'a'),
      text('msg_3', 'assistant', 'msg_1', 'b'),
      text('msg_4', 'user', undefined, 'two'),
      text('msg_5', 'assistant', 'msg_4', 'c'),
      text('msg_6', 'assistant', undefined, 'orphan'),
      text('msg_7', 'assistant', 'msg_4', 'late'),
    ].map((m) => new MessageView(m.info, m.parts));
    const rows = groupRows(list);
    expect(rows.map((r) => (r.kind === 'turn' ? r.steps.map((s) => s.id).join('+') : r.key))).toEqual([
      'msg_1',
      'msg_2+msg_3',
      'msg_4',
      'msg_5',
      'msg_6',
      'msg_7',
    ]);
  });

  it('keeps unchanged rows as the same objects and a growing turn under its key', () => {
    const all = views();
    const before = groupRows(all.slice(0, 5));
    const after = groupRows(all, before);
    expect(after[0]).toBe(before[0]);
    expect(after[1]).not.toBe(before[1]);
    expect(after[1].key).toBe(before[1].key);
    expect(groupRows(all, after)[1]).toBe(after[1]);
  });

  it('adds up the turn: tokens of every step, time from the prompt to the last step', () => {
    const rows = groupRows(views());
    const turn = rows[1] as Turn;
    const usage = turnUsage(turn);
    const steps = fixture.messages.slice(1);
    const tokens = steps.reduce((n, m) => {
      const t = (m.info as { tokens?: { input: number; output: number; reasoning: number; cache: { read: number; write: number } } }).tokens;
      return n + (t ? t.input + t.output + t.reasoning + t.cache.read + t.cache.write : 0);
    }, 0);
    expect(usage.tokens).toBe(tokens);
    expect(usage.tokens).toBeGreaterThan(10_000);
    expect(usage.durationMs).toBe((steps[steps.length - 1].info.time.completed ?? 0) - fixture.messages[0].info.time.created);
    expect(turnText(turn)).toBe('Done: greet() now says hello there.');
  });
});

describe('session total', () => {
  it('takes the server\'s sum when it has one, else adds up the loaded steps', () => {
    const messages = views();
    const loaded = sessionUsage(undefined, messages);
    expect(loaded.fromServer).toBe(false);
    expect(loaded.usage.tokens).toBe(turnUsage(groupRows(messages)[1] as Turn).tokens);
    const server = sessionUsage({ cost: 0.25, tokens: { input: 100, output: 20, reasoning: 0, cache: { read: 5, write: 0 } } }, messages);
    expect(server).toMatchObject({ fromServer: true, usage: { cost: 0.25, tokens: 125 } });
  });
});

describe('TurnItem', () => {
  function render(turn: Turn, props: Record<string, unknown> = {}) {
    const target = document.createElement('div');
    document.body.appendChild(target);
    apps.push(mount(TurnItem, { target, props: { turn, ...props } as never }));
    flushSync();
    return target;
  }

  it('shows the recorded turn as one reply: one header, every step, one action row', () => {
    setLocale('en');
    const turn = groupRows(views())[1] as Turn;
    const target = render(turn, { transferDirection: 'toReviewer' });
    expect(target.querySelectorAll('[data-testid="message-assistant"]')).toHaveLength(1);
    expect(target.querySelectorAll('[data-testid="turn-header"]')).toHaveLength(1);
    expect(target.querySelectorAll('[data-testid="turn-step"]')).toHaveLength(10);
    expect(target.querySelectorAll('[data-testid="copy-message"]')).toHaveLength(1);
    expect(target.querySelectorAll('[data-testid="transfer-button"]')).toHaveLength(1);
    expect(target.querySelector('[data-testid="turn-header"]')?.textContent).toContain('10 steps');
    expect(target.querySelector('[data-testid="turn-usage"]')?.textContent).toMatch(/K tokens · \d+(\.\d)? sec$/);
    // The tool parts are inside, in order.
    const tools = [...target.querySelectorAll('[data-testid="tool-part"]')].map((e) => e.getAttribute('data-tool'));
    expect(tools).toEqual(['write', 'edit', 'bash', 'read', 'grep', 'glob', 'todowrite', 'task', 'edit', 'bash', 'bash']);
  });

  it('copies the whole turn and names the turn for review and transfer', async () => {
    const list = [
      text('msg_1', 'user', undefined, 'go', 1000),
      text('msg_2', 'assistant', 'msg_1', 'First I look.', 2000),
      text('msg_3', 'assistant', 'msg_1', 'Then I answer.', 3000),
      text('msg_4', 'assistant', 'msg_1', '', 4000),
    ].map((m) => new MessageView(m.info, m.parts));
    const turn = groupRows(list)[1] as Turn;
    const target = render(turn, { transferDirection: 'toImplementer' });
    target.querySelector<HTMLButtonElement>('[data-testid="copy-message"]')?.click();
    await vi.waitFor(() => expect(copyText).toHaveBeenCalledWith('First I look.\n\nThen I answer.'));
    target.querySelector<HTMLButtonElement>('[data-testid="cold-review-button"]')?.click();
    await vi.waitFor(() => expect(invoke).toHaveBeenCalledWith({ cmd: 'coldReview', sessionId: 'ses_1', messageId: 'msg_3' }));
    target.querySelector<HTMLButtonElement>('[data-testid="transfer-button"]')?.click();
    await vi.waitFor(() => expect(invoke).toHaveBeenCalledWith({ cmd: 'transfer', sessionId: 'ses_1', messageId: 'msg_3' }));
  });

  it('shows a step\'s error where it happened and no usage while the turn streams', () => {
    const list = [text('msg_1', 'user', undefined, 'go'), text('msg_2', 'assistant', 'msg_1', 'Working.'), text('msg_3', 'assistant', 'msg_1', '')];
    const views = list.map((m) => new MessageView(m.info, m.parts));
    views[1].info = { ...views[1].info, tokens: { input: 10, output: 5, reasoning: 0, cache: { read: 0, write: 0 } } };
    views[2].info = { ...views[2].info, time: { created: 5 }, error: { name: 'APIError', data: { message: 'overloaded' } } };
    const target = render(groupRows(views)[1] as Turn, { busy: true });
    const steps = target.querySelectorAll('[data-testid="turn-step"]');
    expect(steps[1].querySelector('[data-testid="assistant-error"]')?.textContent).toContain('APIError: overloaded');
    expect(steps[0].querySelector('[data-testid="assistant-error"]')).toBeNull();
  });
});

describe('MessageList', () => {
  it('lists the recorded prompt and its turn as two rows', () => {
    const transcript = new Transcript(fixture.messages[0].info.sessionID);
    transcript.applyPage({ seq: 1, sessionId: transcript.sessionId, hasOlder: false, messages: structuredClone(fixture.messages) });
    vi.spyOn(HTMLElement.prototype, 'clientHeight', 'get').mockImplementation(function (this: HTMLElement) {
      return this.classList.contains('scroller') ? 4000 : 0;
    });
    const target = document.createElement('div');
    document.body.appendChild(target);
    apps.push(mount(MessageList, { target, props: { transcript, transferDirection: null, busy: false } }));
    flushSync();
    expect(target.querySelectorAll('[data-testid="message-user"]')).toHaveLength(1);
    expect(target.querySelectorAll('[data-testid="message-assistant"]')).toHaveLength(1);
    expect(target.querySelectorAll('[data-testid="turn-step"]')).toHaveLength(10);
    vi.restoreAllMocks();
  });
});
