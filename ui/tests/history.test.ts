// Going back, branching off and attaching files: the pure helpers, the user message's actions
// (each asks before it discards) and the composer's chips, `@` menu and sends.
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

const invoke = vi.fn();
vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return { ...actual, invoke: (...args: unknown[]) => invoke(...args), copyText: vi.fn(async () => undefined) };
});

const { default: MessageItem } = await import('$lib/components/chat/MessageItem.svelte');
const { default: TurnItem } = await import('$lib/components/chat/TurnItem.svelte');
const { default: Composer } = await import('$lib/components/chat/Composer.svelte');
const { MessageView } = await import('$lib/state/transcript.svelte');
const { toasts } = await import('$lib/state/toasts.svelte');
const { ui } = await import('$lib/state/ui.svelte');
const { store } = await import('$lib/state/store.svelte');
const { setLocale } = await import('$lib/i18n/index.svelte');
const { visibleMessages, revertedCount, forkPoint } = await import('$lib/history');
const att = await import('$lib/attachments');
const { getDraft } = await import('$lib/state/drafts');

type MessageViewT = InstanceType<typeof MessageView>;

beforeAll(() => {
  setLocale('en');
  // jsdom has no modal dialogs.
  HTMLDialogElement.prototype.showModal ??= function (this: HTMLDialogElement) {
    this.setAttribute('open', '');
  };
  HTMLDialogElement.prototype.close ??= function (this: HTMLDialogElement) {
    this.removeAttribute('open');
  };
});

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  invoke.mockReset();
  toasts.clear();
});

function message(id: string, role: 'user' | 'assistant', text: string, sessionID = 'ses_h'): MessageViewT {
  return new MessageView({ id, sessionID, role, time: { created: 1, completed: 2 } }, [
    { id: `prt_${id}`, sessionID, messageID: id, type: 'text', text, synthetic: false, ignored: false },
  ]);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('history helpers', () => {
  const list = [message('msg_1', 'user', 'a'), message('msg_2', 'assistant', 'b'), message('msg_3', 'user', 'c'), message('msg_4', 'assistant', 'd')];

  it('hides the reverted messages and counts them', () => {
    expect(visibleMessages(list, undefined)).toBe(list);
    expect(visibleMessages(list, 'msg_3').map((m) => m.id)).toEqual(['msg_1', 'msg_2']);
    expect(revertedCount(list, 'msg_3')).toBe(2);
    // A revert point that is not loaded: everything after it by id.
    expect(visibleMessages(list, 'msg_25').map((m) => m.id)).toEqual(['msg_1', 'msg_2']);
    expect(revertedCount(list, 'msg_9')).toBe(0);
  });

  it('forks a user message before it and a reply up to the next prompt', () => {
    expect(forkPoint(list, list[2])).toBe('msg_3');
    expect(forkPoint(list, list[1])).toBe('msg_3');
    expect(forkPoint(list, list[3])).toBeUndefined();
  });
});

describe('attachment helpers', () => {
  it('takes images, PDFs and text files, and nothing else', () => {
    expect(att.kindOf({ name: 'a.png', type: 'image/png' })).toBe('image');
    expect(att.kindOf({ name: 'a.pdf', type: 'application/pdf' })).toBe('pdf');
    expect(att.kindOf({ name: 'main.rs', type: '' })).toBe('text');
    expect(att.kindOf({ name: 'x.json', type: 'application/json' })).toBe('text');
    expect(att.kindOf({ name: 'a.zip', type: 'application/zip' })).toBeNull();
    expect(att.kindOf({ name: 'a.svg', type: 'image/svg+xml' })).toBeNull();
  });

  it('says which limit a file breaks', () => {
    const big = { name: 'big.log', size: att.MAX_ATTACHMENT_BYTES + 1, type: 'text/plain' };
    expect(att.checkFiles([], [big])).toEqual({ key: 'attach.tooLarge', params: { name: 'big.log', size: '10.0', limit: '10.0' } });
    expect(att.checkFiles([], [{ name: 'a.zip', size: 1, type: 'application/zip' }])?.key).toBe('attach.unsupported');
    const nine = { name: 'n.txt', size: 9 * 1024 * 1024, type: 'text/plain' };
    expect(att.checkFiles([], [nine, nine, nine])?.key).toBe('attach.tooLargeTotal');
    const many = Array.from({ length: att.MAX_ATTACHMENTS + 1 }, () => ({ name: 'a.txt', size: 1, type: 'text/plain' }));
    expect(att.checkFiles([], many)?.key).toBe('attach.tooMany');
    expect(att.checkFiles([], [nine])).toBeNull();
  });

  it('finds the @mention before the cursor and replaces it with the picked path', () => {
    expect(att.mentionAt('see @ma', 7)).toEqual({ query: 'ma', start: 4, end: 7 });
    expect(att.mentionAt('@', 1)).toEqual({ query: '', start: 0, end: 1 });
    expect(att.mentionAt('mail me@home', 12)).toBeNull();
    expect(att.mentionAt('see @ma now', 11)).toBeNull();
    const m = att.mentionAt('see @ma now', 7);
    expect(m && att.applyMention('see @ma now', m, 'src/main.rs')).toEqual({ text: 'see @src/main.rs now', caret: 17 });
  });

  it('reads a text file into a text/plain data URL', async () => {
    const file = new File(['hello'], 'notes.md', { type: '' });
    const read = await att.readFile(file);
    expect(read.attachment).toEqual({ kind: 'data', filename: 'notes.md', mime: 'text/plain', url: 'data:text/plain;base64,aGVsbG8=' });
    expect(read.preview).toBeUndefined();
  });
});

function renderMessage(props: Record<string, unknown>) {
  const target = document.createElement('div');
  document.body.appendChild(target);
  app = mount(MessageItem, { target, props: props as never });
  flushSync();
  return target;
}

describe('user message actions', () => {
  it('revert asks first, and only then reverts', async () => {
    const session = { id: 'ses_h', slug: '', projectID: 'p', directory: '/p', title: 'H', time: { created: 1, updated: 2 }, revert: { messageID: 'msg_3' } };
    invoke.mockResolvedValue(session);
    const target = renderMessage({ message: message('msg_3', 'user', 'redo this') });
    const button = target.querySelector<HTMLButtonElement>('[data-testid="revert-message"]');
    expect(button?.getAttribute('aria-label')).toBe('Revert to here');
    button?.click();
    flushSync();
    expect(invoke).not.toHaveBeenCalled();
    const dialog = document.querySelector('[data-testid="confirm-dialog"]');
    expect(dialog?.textContent).toContain('Redo brings them back');
    document.querySelector<HTMLButtonElement>('[data-testid="confirm"]')?.click();
    await sleep(0);
    expect(invoke).toHaveBeenCalledWith({ cmd: 'revertSession', sessionId: 'ses_h', messageId: 'msg_3' });
    expect(store.sessions.get('ses_h')?.revert?.messageID).toBe('msg_3');
  });

  it('cancelling the revert sends nothing', () => {
    const target = renderMessage({ message: message('msg_3', 'user', 'keep') });
    target.querySelector<HTMLButtonElement>('[data-testid="revert-message"]')?.click();
    flushSync();
    const cancel = [...document.querySelectorAll<HTMLButtonElement>('[data-testid="confirm-dialog"] button')].find((b) => b.textContent?.trim() === 'Cancel');
    cancel?.click();
    flushSync();
    expect(document.querySelector('[data-testid="confirm-dialog"]')).toBeNull();
    expect(invoke).not.toHaveBeenCalled();
  });

  it('revert and edit wait while the session runs; fork does not', () => {
    const target = renderMessage({ message: message('msg_3', 'user', 'x'), busy: true });
    expect(target.querySelector<HTMLButtonElement>('[data-testid="revert-message"]')?.disabled).toBe(true);
    expect(target.querySelector<HTMLButtonElement>('[data-testid="edit-message"]')?.disabled).toBe(true);
    expect(target.querySelector<HTMLButtonElement>('[data-testid="fork-message"]')?.disabled).toBe(false);
  });

  it('edit asks, then hands the text to the composer', () => {
    ui.editRequest = null;
    const target = renderMessage({ message: message('msg_3', 'user', 'fix the tests') });
    target.querySelector<HTMLButtonElement>('[data-testid="edit-message"]')?.click();
    flushSync();
    document.querySelector<HTMLButtonElement>('[data-testid="confirm"]')?.click();
    flushSync();
    expect(ui.editRequest).toEqual({ sessionId: 'ses_h', messageId: 'msg_3', text: 'fix the tests' });
    ui.editRequest = null;
  });

  it('fork from a user message opens the fork with the message text in its composer', async () => {
    const fork = { id: 'ses_fork', slug: '', projectID: 'p', directory: '/p', title: 'H (fork #1)', time: { created: 1, updated: 2 } };
    invoke.mockResolvedValue(fork);
    const target = renderMessage({ message: message('msg_3', 'user', 'try it another way') });
    const button = target.querySelector<HTMLButtonElement>('[data-testid="fork-message"]');
    expect(button?.getAttribute('aria-label')).toContain('Fork');
    button?.click();
    await sleep(0);
    expect(invoke).toHaveBeenCalledWith({ cmd: 'forkSession', sessionId: 'ses_h', messageId: 'msg_3' });
    expect(ui.selectedSessionId).toBe('ses_fork');
    expect(getDraft('ses_fork')).toBe('try it another way');
  });

  it('a reply offers Fork from here too', () => {
    const reply = message('msg_4', 'assistant', 'done');
    const target = document.createElement('div');
    document.body.appendChild(target);
    app = mount(TurnItem, { target, props: { turn: { kind: 'turn', key: reply.id, steps: [reply], prompt: undefined } } as never });
    flushSync();
    expect(target.querySelector('[data-testid="fork-message"]')?.getAttribute('aria-label')).toBe('Fork from here');
  });
});

let composers = 0;

/** A composer of a session of its own (drafts, their files too, are kept per session). */
function renderComposer(id = `ses_c${++composers}`) {
  const session = { id, slug: '', projectID: 'p', directory: '/proj', title: 'C', time: { created: 1, updated: 2 } };
  invoke.mockImplementation(async (req: { cmd: string; query?: string }) => {
    if (req.cmd === 'providers') return { providers: [], default: {} };
    if (req.cmd === 'agents' || req.cmd === 'commands') return [];
    if (req.cmd === 'findFiles') return ['src/main.rs', 'src/lib.rs'].filter((f) => f.includes(req.query ?? ''));
    if (req.cmd === 'sendPrompt') return { messageId: 'msg_new' };
    throw new Error(`unexpected ${req.cmd}`);
  });
  const target = document.createElement('div');
  document.body.appendChild(target);
  app = mount(Composer, { target, props: { session: session as never, transcript: undefined } });
  flushSync();
  const input = target.querySelector<HTMLTextAreaElement>('[data-testid="composer-input"]')!;
  return { target, input, id };
}

function type(input: HTMLTextAreaElement, value: string) {
  input.value = value;
  input.setSelectionRange(value.length, value.length);
  input.dispatchEvent(new Event('input', { bubbles: true }));
  flushSync();
}

function key(input: HTMLTextAreaElement, k: string) {
  input.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true }));
  flushSync();
}

function sent() {
  return invoke.mock.calls.map((c) => c[0]).filter((r) => r.cmd === 'sendPrompt');
}

async function pickFiles(target: HTMLElement, files: File[]) {
  const picker = target.querySelector<HTMLInputElement>('[data-testid="attach-input"]')!;
  Object.defineProperty(picker, 'files', { value: files, configurable: true });
  const before = target.querySelectorAll('[data-testid="attachment-chip"]').length;
  picker.dispatchEvent(new Event('change', { bubbles: true }));
  // Reading runs in the background: wait for the chips (or a refusal's toast).
  for (let i = 0; i < 200; i++) {
    await sleep(10);
    flushSync();
    if (target.querySelectorAll('[data-testid="attachment-chip"]').length !== before || toasts.items.length) return;
  }
}

describe('composer attachments', () => {
  it('has an Attach files button that opens the file input', () => {
    const { target } = renderComposer();
    const button = target.querySelector<HTMLButtonElement>('[data-testid="attach-files"]')!;
    expect(button.getAttribute('aria-label')).toBe('Attach files');
    const picker = target.querySelector<HTMLInputElement>('[data-testid="attach-input"]')!;
    const clicked = vi.fn();
    picker.addEventListener('click', clicked);
    button.click();
    expect(clicked).toHaveBeenCalled();
  });

  it('a picked file becomes a removable chip and goes out as a file part', async () => {
    const { target, input, id } = renderComposer();
    await pickFiles(target, [new File(['hello'], 'notes.txt', { type: 'text/plain' }), new File(['x'], 'gone.txt', { type: 'text/plain' })]);
    const chips = () => [...target.querySelectorAll('[data-testid="attachment-chip"]')].map((c) => c.getAttribute('data-name'));
    expect(chips()).toEqual(['notes.txt', 'gone.txt']);
    target.querySelector<HTMLButtonElement>('[data-testid="attachment-chip"][data-name="gone.txt"] [data-testid="remove-attachment"]')?.click();
    flushSync();
    expect(chips()).toEqual(['notes.txt']);
    type(input, 'read this');
    key(input, 'Enter');
    await sleep(0);
    expect(sent()).toEqual([
      {
        cmd: 'sendPrompt',
        sessionId: id,
        text: 'read this',
        attachments: [{ kind: 'data', filename: 'notes.txt', mime: 'text/plain', url: 'data:text/plain;base64,aGVsbG8=' }],
      },
    ]);
    expect(chips()).toEqual([]);
  });

  it('files stay with their session when the composer comes back', async () => {
    const first = renderComposer();
    await pickFiles(first.target, [new File(['hello'], 'notes.txt', { type: 'text/plain' })]);
    if (app) unmount(app);
    app = null;
    document.body.innerHTML = '';
    const again = renderComposer(first.id);
    expect(again.target.querySelector('[data-testid="attachment-chip"]')?.getAttribute('data-name')).toBe('notes.txt');
    if (app) unmount(app);
    app = null;
    const other = renderComposer();
    expect(other.target.querySelector('[data-testid="attachment-chip"]')).toBeNull();
  });

  it('a file too large is refused with a toast and attaches nothing', async () => {
    const { target } = renderComposer();
    const big = new File(['x'], 'huge.log', { type: 'text/plain' });
    Object.defineProperty(big, 'size', { value: 11 * 1024 * 1024 });
    await pickFiles(target, [big]);
    expect(target.querySelector('[data-testid="attachment-chip"]')).toBeNull();
    expect(toasts.items.at(-1)?.text).toBe('huge.log is 11.0 MB; a file can be at most 10.0 MB.');
  });

  it('a failed send keeps the text and the files', async () => {
    const { target, input, id } = renderComposer();
    await pickFiles(target, [new File(['hello'], 'notes.txt', { type: 'text/plain' })]);
    const base = invoke.getMockImplementation()!;
    invoke.mockImplementation(async (req: { cmd: string }) => {
      if (req.cmd === 'sendPrompt') throw { code: 'file_too_large', message: 'notes.txt: too big' };
      return base(req);
    });
    type(input, 'read this');
    key(input, 'Enter');
    await sleep(0);
    flushSync();
    expect(input.value).toBe('read this');
    expect(target.querySelectorAll('[data-testid="attachment-chip"]').length).toBe(1);
    expect(toasts.items.at(-1)?.text).toBe('The file is too large to attach.');
  });

  it('@ suggests files of the session folder, navigable with the keyboard, and attaches the pick', async () => {
    const { target, input, id } = renderComposer();
    type(input, 'look at @li');
    await sleep(220);
    flushSync();
    expect(invoke).toHaveBeenCalledWith({ cmd: 'findFiles', sessionId: id, query: 'li' });
    const items = () => [...target.querySelectorAll('[data-testid="file-item"]')].map((i) => i.getAttribute('data-path'));
    expect(items()).toEqual(['src/lib.rs']);
    type(input, 'look at @');
    await sleep(220);
    flushSync();
    expect(items()).toEqual(['src/main.rs', 'src/lib.rs']);
    key(input, 'ArrowDown');
    expect(input.getAttribute('aria-activedescendant')).toMatch(/-1$/);
    key(input, 'Enter');
    await sleep(0);
    flushSync();
    expect(input.value).toBe('look at @src/lib.rs ');
    expect(target.querySelector('[data-testid="file-menu"]')).toBeNull();
    const chip = target.querySelector('[data-testid="attachment-chip"]');
    expect([chip?.getAttribute('data-name'), chip?.getAttribute('data-kind')]).toEqual(['src/lib.rs', 'file']);
    expect(sent()).toEqual([]);
    key(input, 'Enter');
    await sleep(0);
    expect(sent()[0].attachments).toEqual([{ kind: 'file', path: 'src/lib.rs' }]);
  });

  it('Escape closes the @ menu without picking', async () => {
    const { target, input } = renderComposer();
    type(input, '@ma');
    await sleep(220);
    flushSync();
    expect(target.querySelector('[data-testid="file-menu"]')).not.toBeNull();
    key(input, 'Escape');
    expect(target.querySelector('[data-testid="file-menu"]')).toBeNull();
    expect(target.querySelector('[data-testid="attachment-chip"]')).toBeNull();
  });

  it('edit and resend fills the composer and reverts on send', async () => {
    const { target, input, id } = renderComposer();
    ui.editRequest = { sessionId: id, messageId: 'msg_old', text: 'the old words' };
    flushSync();
    await sleep(0);
    expect(input.value).toBe('the old words');
    expect(target.querySelector('[data-testid="composer-editing"]')?.getAttribute('data-message-id')).toBe('msg_old');
    type(input, 'the new words');
    key(input, 'Enter');
    await sleep(0);
    flushSync();
    expect(sent()).toEqual([{ cmd: 'sendPrompt', sessionId: id, text: 'the new words', revertTo: 'msg_old' }]);
    expect(target.querySelector('[data-testid="composer-editing"]')).toBeNull();
  });
});
