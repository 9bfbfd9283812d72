// Opening a long transcript: the first frame builds only the rows on screen (the overscan comes
// a task later), the list sets its scroll position without reading layout back, and rendered
// markdown is reused for a text already rendered.
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { colourMarkdown, markdownCacheChars, renderMarkdownCached, warmUpMarkdown } from '$lib/markdown';

vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return { ...actual, invoke: vi.fn(async () => null) };
});

const { default: MessageList } = await import('$lib/components/chat/MessageList.svelte');
const { Transcript } = await import('$lib/state/transcript.svelte');

function transcript(n: number, reply: (i: number) => string = (i) => `Reply **${i}**`) {
  const t = new Transcript('ses_1');
  t.applyPage({
    seq: 1,
    sessionId: 'ses_1',
    hasOlder: false,
    messages: Array.from({ length: n }, (_, i) => {
      const id = `msg_${String(i).padStart(4, '0')}`;
      return {
        info: { id, sessionID: 'ses_1', role: i % 2 ? 'assistant' : 'user', time: { created: 1, completed: 2 } },
        parts: [{ id: `prt_${id}`, sessionID: 'ses_1', messageID: id, type: 'text', text: reply(i), synthetic: false, ignored: false }],
      };
    }),
  });
  return t;
}

let app: ReturnType<typeof mount> | null = null;
let frames: FrameRequestCallback[] = [];

beforeEach(() => {
  frames = [];
  vi.useFakeTimers();
  vi.stubGlobal('requestAnimationFrame', (cb: FrameRequestCallback) => frames.push(cb));
  vi.stubGlobal('cancelAnimationFrame', () => undefined);
  // jsdom has no layout: give the scroller a 400 px viewport.
  vi.spyOn(HTMLElement.prototype, 'clientHeight', 'get').mockImplementation(function (this: HTMLElement) {
    return this.classList.contains('scroller') ? 400 : 0;
  });
});

afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  vi.useRealTimers();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

function runFrames() {
  const now = frames;
  frames = [];
  for (const cb of now) cb(0);
}

/** Runs frames and timers until nothing is scheduled; answers the row count after each frame. */
function settle(target: HTMLElement): number[] {
  const counts: number[] = [];
  for (let i = 0; i < 20 && (frames.length > 0 || vi.getTimerCount() > 0); i++) {
    runFrames();
    vi.runOnlyPendingTimers();
    flushSync();
    counts.push(target.querySelectorAll('.row').length);
  }
  return counts;
}

describe('first frame of a long transcript', () => {
  it('builds the rows on screen first and the overscan a task later', () => {
    const target = document.createElement('div');
    document.body.appendChild(target);
    app = mount(MessageList, { target, props: { transcript: transcript(50), transferDirection: null, busy: false } });
    flushSync();
    const first = target.querySelectorAll('.row').length;
    // 400 px of one-line rows (guessed ~60 px each): seven, not the 900 px of overscan on top.
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThanOrEqual(8);
    const counts = settle(target);
    expect(counts.at(-1)).toBeGreaterThan(first + 5);
  });

  it('guesses a long reply as tall, so a view of 400 px builds one or two of them', () => {
    const code = Array.from({ length: 30 }, (_, k) => `  const row${k} = offsets[${k}];`).join('\n');
    const long = (i: number) => `Reply ${i}: some **prose**.\n\n\`\`\`ts\n${code}\n\`\`\`\n\nMore prose.`;
    const target = document.createElement('div');
    document.body.appendChild(target);
    app = mount(MessageList, { target, props: { transcript: transcript(50, long), transferDirection: null, busy: false } });
    flushSync();
    // A fixed 96 px guess would build five of these 600 px rows for a 400 px view.
    const first = target.querySelectorAll('.row').length;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThanOrEqual(2);
    // The overscan comes a step a frame: at most two of these replies per task.
    const counts = settle(target);
    expect(counts.at(-1)).toBeGreaterThan(first);
    let before = first;
    for (const n of counts) {
      expect(n - before).toBeLessThanOrEqual(2);
      before = n;
    }
  });

  it('sets the scroll position without reading layout back', () => {
    const reads = vi.spyOn(Element.prototype, 'scrollTop', 'get');
    const target = document.createElement('div');
    document.body.appendChild(target);
    app = mount(MessageList, { target, props: { transcript: transcript(50), transferDirection: null, busy: false } });
    flushSync();
    runFrames();
    vi.runAllTimers();
    flushSync();
    runFrames();
    expect(reads).not.toHaveBeenCalled();
  });
});

describe('rendered markdown cache', () => {
  it('renders a text once and answers the same html after', () => {
    const text = `# Title ${Math.random()}\n\n\`\`\`ts\nconst a = 1;\n\`\`\``;
    const first = renderMarkdownCached(text);
    expect(first).toContain('<h1>');
    const parse = vi.spyOn(DOMParser.prototype, 'parseFromString');
    const again = renderMarkdownCached(text);
    expect(again).toBe(first);
    expect(parse).not.toHaveBeenCalled();
  });

  it('keeps at most 1.5 million characters however many replies were rendered', () => {
    // 2,000 replies of 1.5 kB: a 5,000-message transcript scrolled from end to end.
    const para = 'A reply in plain words, rendered as paragraphs without the parser. '.repeat(22);
    for (let i = 0; i < 2000; i++) renderMarkdownCached(`${i}: ${para}`);
    expect(markdownCacheChars().rendered).toBeLessThanOrEqual(1_500_000 + 2 * para.length + 100);
    expect(markdownCacheChars().rendered).toBeGreaterThan(1_000_000);
  });

  it('keeps one copy of a coloured text: its coloured html replaces the rendered one', async () => {
    vi.useRealTimers();
    const text = `Code ${Math.random()}:\n\n\`\`\`ts\nconst answer: number = 42;\n\`\`\`\n`;
    const html = renderMarkdownCached(text);
    const before = markdownCacheChars();
    const out = await colourMarkdown(text, html);
    expect(out).toContain('hljs');
    const after = markdownCacheChars();
    // (Blocks of the lists mounted above may be coloured meanwhile: that only moves more.)
    expect(after.rendered).toBeLessThanOrEqual(before.rendered - text.length - html.length);
    expect(after.coloured).toBeGreaterThanOrEqual(before.coloured + text.length + (out ?? '').length);
  });
});

describe('markdown warm-up', () => {
  it('renders a sample once the page is idle, outside the cache, and not at all without idle callbacks', () => {
    const idle: (() => void)[] = [];
    vi.stubGlobal('requestIdleCallback', (cb: () => void) => idle.push(cb));
    const parse = vi.spyOn(DOMParser.prototype, 'parseFromString');
    const before = markdownCacheChars();
    warmUpMarkdown();
    expect(idle).toHaveLength(1);
    expect(parse).not.toHaveBeenCalled();
    idle[0]();
    expect(parse).toHaveBeenCalledTimes(1);
    expect(markdownCacheChars()).toEqual(before);
    vi.stubGlobal('requestIdleCallback', undefined);
    expect(() => warmUpMarkdown()).not.toThrow();
  });
});

describe('opening a session from the sidebar', () => {
  it('fits the composer to its text in the next frame, not while the chat is built', async () => {
    const { default: Composer } = await import('$lib/components/chat/Composer.svelte');
    const reads = vi.spyOn(HTMLElement.prototype, 'scrollHeight', 'get').mockReturnValue(40);
    const target = document.createElement('div');
    document.body.appendChild(target);
    const session = { id: 'ses_k', slug: '', projectID: 'p', directory: '/p', title: 'K', time: { created: 1, updated: 2 } };
    app = mount(Composer, { target, props: { session: session as never, transcript: undefined } });
    flushSync();
    expect(reads).not.toHaveBeenCalled();
    runFrames();
    expect(reads).toHaveBeenCalled();
    const input = target.querySelector<HTMLTextAreaElement>('[data-testid="composer-input"]');
    expect(input?.style.height).toBe('42px');
  });

  async function openComposer(id: string) {
    const { default: Composer } = await import('$lib/components/chat/Composer.svelte');
    const target = document.createElement('div');
    document.body.appendChild(target);
    const session = { id, slug: '', projectID: 'p', directory: '/p', title: id, time: { created: 1, updated: 2 } };
    app = mount(Composer, { target, props: { session: session as never, transcript: undefined } });
    flushSync();
    const input = target.querySelector<HTMLTextAreaElement>('[data-testid="composer-input"]');
    if (!input) throw new Error('no composer input');
    return { target, input };
  }

  it('puts the cursor in the composer in the next frame, not in the click', async () => {
    const focus = vi.spyOn(HTMLElement.prototype, 'focus');
    const { input } = await openComposer('ses_f');
    // Focusing here would lay out the whole view the click just built, in the click's task.
    expect(focus).not.toHaveBeenCalled();
    expect(document.activeElement).not.toBe(input);
    runFrames();
    expect(document.activeElement).toBe(input);
  });

  it('moves the cursor at once when a key comes before that frame, so typed text arrives', async () => {
    const { input } = await openComposer('ses_t');
    expect(document.activeElement).not.toBe(input);
    // The key goes to whatever has the focus (the clicked sidebar item, here the body); the
    // browser then inserts its character into the element focused during keydown.
    const down = new KeyboardEvent('keydown', { key: 'h', bubbles: true, cancelable: true });
    document.body.dispatchEvent(down);
    expect(document.activeElement).toBe(input);
    expect(down.defaultPrevented).toBe(false);
    input.value = 'hi';
    input.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
    runFrames();
    flushSync();
    expect(document.activeElement).toBe(input);
    expect(input.value).toBe('hi');
  });

  it('leaves the cursor in a field the user moved to before that frame', async () => {
    const search = document.createElement('input');
    document.body.appendChild(search);
    const { input } = await openComposer('ses_o');
    search.focus();
    search.dispatchEvent(new KeyboardEvent('keydown', { key: 'x', bubbles: true }));
    runFrames();
    expect(document.activeElement).toBe(search);
    expect(document.activeElement).not.toBe(input);
  });

  it('mounts the model pickers after the first paint, in a task of their own', async () => {
    const { target } = await openComposer('ses_p');
    expect(target.querySelector('[data-testid="agent-picker"]')).toBeNull();
    runFrames();
    flushSync();
    // Still not in the frame itself: that frame lays out the new view.
    expect(target.querySelector('[data-testid="agent-picker"]')).toBeNull();
    vi.runOnlyPendingTimers();
    flushSync();
    expect(target.querySelector('[data-testid="agent-picker"]')).not.toBeNull();
    expect(target.querySelector('[data-testid="pickers-pending"]')).toBeNull();
  });
});
