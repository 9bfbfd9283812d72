import { flushSync, mount, tick, unmount } from 'svelte';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

const invoke = vi.fn();
vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return { ...actual, invoke: (...args: unknown[]) => invoke(...args) };
});

const { default: NewSessionDialog } = await import('$lib/components/sessions/NewSessionDialog.svelte');
const { HostError } = await import('$lib/host');
const { toasts } = await import('$lib/state/toasts.svelte');
const { ui } = await import('$lib/state/ui.svelte');
const { store } = await import('$lib/state/store.svelte');
const { parseDefaultTitle, sessionTitle } = await import('$lib/titles');
const { setLocale } = await import('$lib/i18n/index.svelte');

beforeAll(() => {
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
  ui.select(null);
});

const choices = { current: '/srv/app', recent: ['/home/dev/shop', '/home/dev/blog'], known: ['/srv/app', '/home/dev/shop', '/opt/tools'] };

async function open(onclose = vi.fn()) {
  const target = document.createElement('div');
  document.body.appendChild(target);
  app = mount(NewSessionDialog, { target, props: { onclose } });
  flushSync();
  await tick();
  await Promise.resolve();
  flushSync();
  return { target, onclose };
}

const q = <T extends Element>(sel: string) => document.querySelector<T>(sel);
const options = () => [...document.querySelectorAll<HTMLElement>('[data-testid="folder-option"]')].map((o) => o.dataset.folder);

function type(value: string) {
  const input = q<HTMLInputElement>('[data-testid="new-session-directory"]')!;
  input.value = value;
  input.dispatchEvent(new Event('input', { bubbles: true }));
  flushSync();
}

async function submit() {
  q<HTMLFormElement>('#new-session-form')!.requestSubmit();
  for (let i = 0; i < 5; i++) await Promise.resolve();
  flushSync();
}

describe('New session dialog', () => {
  it('lists recent folders first, then the server’s, each once, and filters as you type', async () => {
    invoke.mockImplementation(async (req: { cmd: string }) => (req.cmd === 'folders' ? choices : null));
    await open();
    expect(options()).toEqual(['/home/dev/shop', '/home/dev/blog', '/srv/app', '/opt/tools']);
    // Without an open session the most recent folder is the default.
    expect(q<HTMLInputElement>('[data-testid="new-session-directory"]')!.value).toBe('/home/dev/shop');
    type('dev b');
    expect(options()).toEqual(['/home/dev/blog']);
    q<HTMLElement>('[data-testid="folder-option"]')!.click();
    flushSync();
    expect(q<HTMLInputElement>('[data-testid="new-session-directory"]')!.value).toBe('/home/dev/blog');
  });

  it('defaults to the open session’s folder', async () => {
    invoke.mockImplementation(async (req: { cmd: string }) => (req.cmd === 'folders' ? choices : null));
    store.sessions.set('ses_1', { id: 'ses_1', directory: '/srv/app', title: 't', time: { created: 1, updated: 1 } } as never);
    ui.select('ses_1');
    await open();
    expect(q<HTMLInputElement>('[data-testid="new-session-directory"]')!.value).toBe('/srv/app');
    store.sessions.delete('ses_1');
  });

  it('shows a refused folder at the field, keeps the dialog open and toasts nothing', async () => {
    invoke.mockImplementation(async (req: { cmd: string }) => {
      if (req.cmd === 'folders') return choices;
      throw new HostError('folder_missing', 'the folder /nope does not exist');
    });
    const { onclose } = await open();
    type('/nope');
    await submit();
    const problem = q<HTMLElement>('[data-testid="new-session-problem"]')!;
    expect(problem.textContent).toContain('does not exist');
    expect(problem.getAttribute('role')).toBe('alert');
    expect(q('[data-testid="new-session-directory"]')!.getAttribute('aria-invalid')).toBe('true');
    expect(onclose).not.toHaveBeenCalled();
    expect(toasts.items).toEqual([]);
    expect(invoke).toHaveBeenCalledWith({ cmd: 'createSession', directory: '/nope' });
  });

  it('creates the session, closes and hands the focus to the composer', async () => {
    const created = { id: 'ses_new', directory: '/home/dev/shop', title: 'New session - 2026-12-01T10:00:00.000Z', time: { created: 1, updated: 1 } };
    invoke.mockImplementation(async (req: { cmd: string }) => (req.cmd === 'folders' ? choices : created));
    const before = ui.focusComposer;
    const { onclose } = await open();
    await submit();
    expect(onclose).toHaveBeenCalled();
    expect(ui.selectedSessionId).toBe('ses_new');
    expect(ui.focusComposer).toBe(before + 1);
    store.sessions.delete('ses_new');
  });

  it('a folder list that comes while the title is typed leaves the focus and the text there', async () => {
    // Chromium's `select()` focuses the field it selects (jsdom's does not): emulated here, so
    // a late `select()` of the folder field would show as the focus moving.
    const select = vi.spyOn(HTMLInputElement.prototype, 'select').mockImplementation(function (this: HTMLInputElement) {
      this.focus();
      this.setSelectionRange(0, this.value.length);
    });
    let answer: (c: typeof choices) => void = () => undefined;
    invoke.mockImplementation((req: { cmd: string }) => (req.cmd === 'folders' ? new Promise((r) => (answer = r)) : Promise.resolve(null)));
    try {
      await open();
      const directory = q<HTMLInputElement>('[data-testid="new-session-directory"]')!;
      const title = q<HTMLInputElement>('[data-testid="new-session-title"]')!;
      type('/home/dev/repo');
      title.focus();
      title.value = 'Greeting in English';
      title.dispatchEvent(new Event('input', { bubbles: true }));
      flushSync();
      answer(choices);
      await new Promise((r) => setTimeout(r, 0));
      flushSync();
      expect(document.activeElement).toBe(title);
      expect(directory.value).toBe('/home/dev/repo');
      q<HTMLInputElement>('[data-testid="new-session-worktree"]')!.click();
      flushSync();
      expect(q<HTMLInputElement>('[data-testid="new-session-worktree-name"]')!.value).toBe('greeting-in-english');
    } finally {
      select.mockRestore();
    }
  });

  it('the folder the list fills in is selected while its field has focus, so typing replaces it', async () => {
    const select = vi.spyOn(HTMLInputElement.prototype, 'select');
    ui.lastDirectory = '';
    let answer: (c: typeof choices) => void = () => undefined;
    invoke.mockImplementation((req: { cmd: string }) => (req.cmd === 'folders' ? new Promise((r) => (answer = r)) : Promise.resolve(null)));
    try {
      await open();
      const directory = q<HTMLInputElement>('[data-testid="new-session-directory"]')!;
      expect(directory.value).toBe('');
      expect(document.activeElement).toBe(directory);
      select.mockClear();
      answer(choices);
      await new Promise((r) => setTimeout(r, 0));
      flushSync();
      expect(directory.value).toBe('/home/dev/shop');
      expect(select.mock.contexts).toContain(directory);
    } finally {
      select.mockRestore();
    }
  });

  it('an empty folder is refused before anything is sent', async () => {
    invoke.mockImplementation(async (req: { cmd: string }) => (req.cmd === 'folders' ? { recent: [], known: [] } : null));
    await open();
    type('   ');
    await submit();
    expect(q('[data-testid="new-session-problem"]')!.textContent).toContain('full path');
    expect(invoke).not.toHaveBeenCalledWith(expect.objectContaining({ cmd: 'createSession' }));
  });
});

describe('Session titles', () => {
  it('shows the server’s placeholder title as a readable time', () => {
    setLocale('en');
    expect(parseDefaultTitle('Fix the login form')).toBeNull();
    const at = new Date('2026-12-01T09:05:00.000Z');
    expect(parseDefaultTitle('New session - 2026-12-01T09:05:00.000Z')).toEqual({ child: false, at });
    const shown = sessionTitle({ title: 'New session - 2026-12-01T09:05:00.000Z' }, new Date('2026-12-01T12:00:00Z'));
    expect(shown).toMatch(/^New session · \d{1,2}:\d{2}/);
    expect(shown).not.toContain('2026-12-01T');
    expect(sessionTitle({ title: 'Child session - 2026-11-20T09:05:00.000Z' }, new Date('2026-12-01T12:00:00Z'))).toMatch(/^Subtask · /);
    expect(sessionTitle({ title: '  ' })).toBe('Untitled session');
    expect(sessionTitle({ title: 'Fix the login form' })).toBe('Fix the login form');
  });
});
