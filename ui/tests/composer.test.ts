// The composer's `/` menu and outbox: what the parts the composer is made of must keep doing.
// The `@` menu's navigation, attachments and edit-and-resend are covered in history.test.ts.
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

const invoke = vi.fn();
vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return { ...actual, invoke: (...args: unknown[]) => invoke(...args) };
});

const { default: Composer } = await import('$lib/components/chat/Composer.svelte');
const { setLocale } = await import('$lib/i18n/index.svelte');
const { outbox } = await import('$lib/state/outbox.svelte');
const { store } = await import('$lib/state/store.svelte');
const { catalog } = await import('$lib/state/catalog.svelte');

beforeAll(() => setLocale('en'));

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  invoke.mockReset();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let composers = 0;

function renderComposer(directory = `/proj${++composers}`) {
  const id = `ses_k${composers}`;
  const session = { id, slug: '', projectID: 'p', directory, title: 'K', time: { created: 1, updated: 2 } };
  invoke.mockImplementation(async (req: { cmd: string }) => {
    if (req.cmd === 'providers') return { providers: [], default: {} };
    if (req.cmd === 'agents') return [];
    if (req.cmd === 'commands') {
      return [
        { name: 'init', description: 'create AGENTS.md', builtin: false },
        { name: 'review', description: 'review the changes', builtin: false },
      ];
    }
    if (req.cmd === 'runCommand') return null;
    if (req.cmd === 'findFiles') return ['src/main.rs'];
    throw new Error(`unexpected ${req.cmd}`);
  });
  store.connection = { state: 'ready' } as never;
  const target = document.createElement('div');
  document.body.appendChild(target);
  app = mount(Composer, { target, props: { session: session as never, transcript: undefined } });
  flushSync();
  const input = target.querySelector<HTMLTextAreaElement>('[data-testid="composer-input"]')!;
  return { target, input, id, loaded: catalog.get(directory).load() };
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

describe('composer / menu', () => {
  it('lists the matching commands, moves with the arrows, picks with Tab and closes with Escape', async () => {
    const { target, input, loaded } = renderComposer();
    await loaded;
    flushSync();
    type(input, '/');
    const names = () => [...target.querySelectorAll('[data-testid="command-item"]')].map((i) => i.getAttribute('data-name'));
    expect(names()).toEqual(expect.arrayContaining(['init', 'review']));
    const first = input.getAttribute('aria-activedescendant');
    expect(first).toMatch(/-0$/);
    key(input, 'ArrowDown');
    expect(input.getAttribute('aria-activedescendant')).toMatch(/-1$/);
    key(input, 'ArrowUp');
    expect(input.getAttribute('aria-activedescendant')).toMatch(/-0$/);
    type(input, '/rev');
    expect(names()).toEqual(['review']);
    key(input, 'Tab');
    expect(input.value).toBe('/review ');
    expect(target.querySelector('[data-testid="command-menu"]')).toBeNull();
    type(input, '/in');
    expect(target.querySelector('[data-testid="command-menu"]')).not.toBeNull();
    key(input, 'Escape');
    expect(target.querySelector('[data-testid="command-menu"]')).toBeNull();
    expect(input.value).toBe('/in');
  });

  it('Enter on a complete command name runs it', async () => {
    const { input, id, loaded } = renderComposer();
    await loaded;
    flushSync();
    type(input, '/init');
    key(input, 'Enter');
    await sleep(0);
    const run = invoke.mock.calls.map((c) => c[0]).find((r) => r.cmd === 'runCommand');
    expect(run).toMatchObject({ cmd: 'runCommand', sessionId: id, command: 'init' });
    expect(input.value).toBe('');
  });
});

describe('composer outbox', () => {
  it('says a message waits while offline and takes it back into the box', async () => {
    const { target, input, id } = renderComposer();
    store.connection = { state: 'reconnecting', attempt: 1, retryInMs: 1000 } as never;
    flushSync();
    expect(target.querySelector('[data-testid="composer-offline"]')?.getAttribute('data-queued')).toBe('0');
    type(input, 'later please');
    key(input, 'Enter');
    await sleep(0);
    flushSync();
    expect(outbox.of(id).map((q) => q.text)).toEqual(['later please']);
    expect(target.querySelector('[data-testid="composer-offline"]')?.getAttribute('data-queued')).toBe('1');
    expect(input.value).toBe('');
    target.querySelector<HTMLButtonElement>('[data-testid="composer-unqueue"]')!.click();
    flushSync();
    expect(input.value).toBe('later please');
    expect(outbox.of(id)).toEqual([]);
    store.connection = { state: 'ready' } as never;
    flushSync();
  });
});

describe('composer @ menu', () => {
  it('asks the server once per query, not again after every answer', async () => {
    const { target, input } = renderComposer();
    type(input, 'see @ma');
    await sleep(1200);
    flushSync();
    expect(target.querySelector('[data-testid="file-item"]')?.getAttribute('data-path')).toBe('src/main.rs');
    const searches = () => invoke.mock.calls.map((c) => c[0]).filter((r) => r.cmd === 'findFiles');
    expect(searches()).toEqual([{ cmd: 'findFiles', sessionId: expect.any(String), query: 'ma' }]);
    type(input, 'see @mai');
    await sleep(600);
    expect(searches().map((r) => r.query)).toEqual(['ma', 'mai']);
  });
});
