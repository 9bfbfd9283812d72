// The Changes tab and the todo dock: the file list with counts and keyboard selection, the
// selected file's diff, the scope switch, the empty, loading, unavailable and error states,
// asking again when the backend pushes `filesChanged` for the tab's session or folder (and not
// for another folder), and the dock's checklist with its remembered collapsed state.
import { flushSync, mount, tick, unmount } from 'svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const invoke = vi.fn();
vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return { ...actual, invoke: (...args: unknown[]) => invoke(...args) };
});

const { default: ChangesPanel } = await import('$lib/components/changes/ChangesPanel.svelte');
const { default: TodoDock } = await import('$lib/components/chat/TodoDock.svelte');
const { store } = await import('$lib/state/store.svelte');
const { setLocale } = await import('$lib/i18n/index.svelte');
const { HostError } = await import('$lib/host');

type ChangeSet = import('$lib/types/ChangeSet').ChangeSet;
type Change = import('$lib/types/Change').Change;
type Request = import('$lib/types/Request').Request;

const DIR = '/home/user/project';

function changeSet(over: Partial<ChangeSet> = {}): ChangeSet {
  return {
    scope: 'workingTree',
    sessionId: 'ses_1',
    fromOriginal: false,
    directory: DIR,
    files: [
      { path: 'src/app.ts', status: 'modified', additions: 2, deletions: 1, tooLarge: false,
        patch: 'diff --git a/src/app.ts b/src/app.ts\n--- a/src/app.ts\n+++ b/src/app.ts\n@@ -1,2 +1,3 @@\n one\n-two\n+TWO\n+three\n' },
      { path: 'notes.md', status: 'added', additions: 1, deletions: 0, tooLarge: false, patch: '@@ -0,0 +1 @@\n+fresh note\n' },
      { path: 'big.json', status: 'modified', additions: 90000, deletions: 3, tooLarge: true },
    ],
    ...over,
  };
}

let app: ReturnType<typeof mount> | null = null;
let seq = 1000;

function render(component: typeof ChangesPanel | typeof TodoDock, props: Record<string, unknown>) {
  const target = document.createElement('div');
  document.body.appendChild(target);
  app = mount(component, { target, props: props as never });
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

function asked(): Request[] {
  return invoke.mock.calls.map((c) => c[0] as Request);
}

beforeEach(() => {
  setLocale('en');
  localStorage.clear();
  store.connection = { state: 'ready', url: 'http://127.0.0.1:1', version: '1.18.33', managed: false } as never;
  store.sessions.set('ses_1', { id: 'ses_1', title: 'Implements', directory: DIR } as never);
});

afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  invoke.mockReset();
  store.todos.clear();
  store.sessions.clear();
});

describe('ChangesPanel', () => {
  it('says "1 file changed" in the singular, in English and German', async () => {
    const one = changeSet({ files: changeSet().files.slice(0, 1) });
    invoke.mockResolvedValue(one);
    let target = render(ChangesPanel, { sessionId: 'ses_1' });
    await settle();
    expect(target.querySelector('[data-testid="changes-summary"]')?.textContent?.trim()).toMatch(/^1 file changed\b/);
    unmount(app!);
    app = null;
    setLocale('de');
    target = render(ChangesPanel, { sessionId: 'ses_1' });
    await settle();
    expect(target.querySelector('[data-testid="changes-summary"]')?.textContent?.trim()).toMatch(/^1 Datei geändert\b/);
    unmount(app!);
    app = null;
    invoke.mockResolvedValue(changeSet());
    target = render(ChangesPanel, { sessionId: 'ses_1' });
    await settle();
    expect(target.querySelector('[data-testid="changes-summary"]')?.textContent?.trim()).toMatch(/^3 Dateien geändert\b/);
  });

  it('lists the files with counts, shows the first diff, and moves through the list with the arrow keys', async () => {
    invoke.mockResolvedValue(changeSet());
    const target = render(ChangesPanel, { sessionId: 'ses_1' });
    await settle();
    expect(asked()[0]).toEqual({ cmd: 'changes', sessionId: 'ses_1', scope: 'workingTree' });
    const panel = target.querySelector('[data-testid="changes-panel"]');
    expect(panel?.getAttribute('data-state')).toBe('ready');
    const rows = [...target.querySelectorAll('[data-testid="changes-file"]')];
    expect(rows.map((r) => r.getAttribute('data-path'))).toEqual(['src/app.ts', 'notes.md', 'big.json']);
    expect(rows[0].textContent).toContain('+2');
    expect(rows[0].textContent).toContain('−1');
    expect(target.querySelector('[data-testid="changes-summary"]')?.textContent).toContain('3 files changed');
    const diff = () => target.querySelector('[data-testid="changes-diff"]');
    expect(diff()?.getAttribute('data-path')).toBe('src/app.ts');
    expect(diff()?.textContent).toContain('TWO');
    expect(diff()?.querySelector('[data-kind="add"]')?.textContent).toContain('TWO');

    const list = target.querySelector<HTMLElement>('[role="listbox"]');
    expect(list?.getAttribute('aria-label')).toBe('Changed files');
    list?.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowDown', bubbles: true }));
    flushSync();
    expect(diff()?.getAttribute('data-path')).toBe('notes.md');
    expect(diff()?.textContent).toContain('fresh note');
    expect(list?.getAttribute('aria-activedescendant')).toBe(
      target.querySelector('[data-path="notes.md"][role="option"]')?.id,
    );
    list?.dispatchEvent(new KeyboardEvent('keydown', { key: 'End', bubbles: true }));
    flushSync();
    expect(target.querySelector('[data-testid="changes-too-large"]')?.textContent).toContain('+90000');
  });

  it('switches scope with the radio buttons and says when OpenCode keeps no snapshots', async () => {
    invoke.mockImplementation(async (req: Request) =>
      req.cmd === 'changes' && req.scope === 'session'
        ? changeSet({ scope: 'session', files: [], unavailable: 'noSnapshots' })
        : changeSet(),
    );
    const target = render(ChangesPanel, { sessionId: 'ses_1' });
    await settle();
    const radios = [...target.querySelectorAll<HTMLElement>('[role="radio"]')];
    expect(radios.map((r) => r.textContent?.trim())).toEqual(['Working tree', 'Session', 'Last turn', 'Against base']);
    radios[0].dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
    await settle();
    expect(asked().at(-1)).toEqual({ cmd: 'changes', sessionId: 'ses_1', scope: 'session' });
    expect(radios[1].getAttribute('aria-checked')).toBe('true');
    const note = target.querySelector('[data-testid="changes-unavailable"]');
    expect(note?.getAttribute('data-reason')).toBe('noSnapshots');
    expect(note?.textContent).toContain('no snapshots');
    expect(localStorage.getItem('crosscheck.changes.scope')).toBe('"session"');
  });

  it('shows loading, then empty; and an error with its localized text and a retry', async () => {
    let answer: (set: ChangeSet) => void = () => undefined;
    invoke.mockImplementationOnce(() => new Promise<ChangeSet>((resolve) => (answer = resolve)));
    const target = render(ChangesPanel, { sessionId: 'ses_1' });
    await settle();
    expect(target.querySelector('[data-testid="changes-loading"]')).not.toBeNull();
    answer(changeSet({ files: [] }));
    await settle();
    expect(target.querySelector('[data-testid="changes-empty"]')?.textContent).toContain('matches HEAD');

    invoke.mockRejectedValueOnce(new HostError('opencode_malformed', 'unexpected answer from OpenCode to GET /vcs/diff'));
    target.querySelector<HTMLElement>('[aria-label="Load the changes again"]')?.click();
    await settle();
    const alert = target.querySelector('[data-testid="changes-error"]');
    expect(alert?.getAttribute('role')).toBe('alert');
    expect(alert?.textContent).toContain('cannot read');
    expect(alert?.textContent).toContain('GET /vcs/diff');
    invoke.mockResolvedValueOnce(changeSet());
    alert?.querySelector('button')?.click();
    await settle();
    expect(target.querySelectorAll('[data-testid="changes-file"]')).toHaveLength(3);
  });

  it('keeps waiting for a slow server with the seconds it waited, and says "slow", not "cannot reach", when it gives up', async () => {
    vi.useFakeTimers();
    try {
      let answer: (set: ChangeSet) => void = () => undefined;
      invoke.mockImplementationOnce(() => new Promise<ChangeSet>((resolve) => (answer = resolve)));
      const target = render(ChangesPanel, { sessionId: 'ses_1' });
      await settle();
      expect(target.querySelector('[data-testid="changes-slow"]')).toBeNull();
      vi.advanceTimersByTime(31_000);
      flushSync();
      const slow = target.querySelector('[data-testid="changes-slow"]');
      expect(slow?.textContent).toContain('31 s');
      expect(slow?.textContent).toContain('connected');
      expect(target.querySelector('[data-testid="changes-error"]')).toBeNull();
      answer(changeSet());
      await settle();
      expect(target.querySelectorAll('[data-testid="changes-file"]')).toHaveLength(3);
      expect(target.querySelector('[data-testid="changes-slow"]')).toBeNull();

      invoke.mockRejectedValueOnce(new HostError('opencode_slow', 'cannot reach OpenCode at http://127.0.0.1:1/vcs/diff: operation timed out'));
      target.querySelector<HTMLElement>('[aria-label="Load the changes again"]')?.click();
      await settle();
      const alert = target.querySelector('[data-testid="changes-error"]');
      expect(alert?.getAttribute('data-code')).toBe('opencode_slow');
      expect(alert?.textContent).toContain('did not answer in time');
      expect(alert?.textContent).not.toContain('Cannot reach');
      expect(alert?.querySelector('button')?.textContent).toContain('Retry');
    } finally {
      vi.useRealTimers();
    }
  });

  it('says a file is too large or binary instead of "No changes."', async () => {
    invoke.mockResolvedValue(changeSet({
      files: [
        { path: 'big.txt', status: 'added', additions: 270000, deletions: 0, tooLarge: true },
        { path: 'logo.png', status: 'modified', additions: 0, deletions: 0, tooLarge: false },
      ],
    }));
    const target = render(ChangesPanel, { sessionId: 'ses_1' });
    await settle();
    expect(target.querySelector('[data-testid="changes-too-large"]')?.textContent).toContain('+270000');
    expect(target.textContent).not.toContain('No changes.');
    target.querySelectorAll<HTMLElement>('[data-testid="changes-file"]')[1]?.click();
    flushSync();
    expect(target.querySelector('[data-testid="changes-diff"]')?.textContent).toContain('binary');
  });

  it("asks again when the backend pushes filesChanged for its folder or session, not for another folder", async () => {
    invoke.mockResolvedValue(changeSet());
    render(ChangesPanel, { sessionId: 'ses_1' });
    await settle();
    expect(invoke).toHaveBeenCalledTimes(1);
    push({ type: 'filesChanged', directory: '/somewhere/else' });
    await settle();
    expect(invoke).toHaveBeenCalledTimes(1);
    push({ type: 'filesChanged', directory: DIR });
    await settle();
    expect(invoke).toHaveBeenCalledTimes(2);
    push({ type: 'filesChanged', sessionId: 'ses_other' });
    await settle();
    expect(invoke).toHaveBeenCalledTimes(2);
    push({ type: 'filesChanged', sessionId: 'ses_1' });
    await settle();
    expect(invoke).toHaveBeenCalledTimes(3);
  });

  it("names the original when a review session's tab shows its changes", async () => {
    store.sessions.set('ses_orig', { id: 'ses_orig', title: 'The implementation', directory: DIR } as never);
    invoke.mockResolvedValue(changeSet({ sessionId: 'ses_orig', fromOriginal: true }));
    const target = render(ChangesPanel, { sessionId: 'ses_1' });
    await settle();
    expect(target.querySelector('[data-testid="changes-original"]')?.textContent).toContain('The implementation');
  });
});

describe('TodoDock', () => {
  const todos = [
    { content: 'Read the code', status: 'completed', priority: 'high' },
    { content: 'Write the fix', status: 'in_progress', priority: 'high' },
    { content: 'Ask for review', status: 'pending', priority: 'medium' },
    { content: 'Old idea', status: 'cancelled', priority: 'low' },
  ] as const;

  it('reads the list, shows each status, and follows pushed lists', async () => {
    invoke.mockResolvedValue(todos);
    const target = render(TodoDock, { sessionId: 'ses_1' });
    await settle();
    expect(asked()[0]).toEqual({ cmd: 'todos', sessionId: 'ses_1' });
    const items = [...target.querySelectorAll('[data-testid="todo-item"]')];
    expect(items.map((i) => i.getAttribute('data-status'))).toEqual(['completed', 'in_progress', 'pending', 'cancelled']);
    expect(items[1].querySelector('[role="img"]')?.getAttribute('aria-label')).toBe('In progress');
    expect(target.querySelector('[data-testid="todo-progress"]')?.textContent).toBe('1 of 4 done');

    push({ type: 'todos', sessionId: 'ses_1', todos: [{ content: 'Only one', status: 'completed', priority: 'high' }] });
    expect(target.querySelectorAll('[data-testid="todo-item"]')).toHaveLength(1);
    push({ type: 'todos', sessionId: 'ses_1', todos: [] });
    expect(target.querySelector('[data-testid="todo-dock"]')).toBeNull();
  });

  it('collapses and remembers it', async () => {
    store.setTodos('ses_1', [...todos]);
    invoke.mockResolvedValue(todos);
    let target = render(TodoDock, { sessionId: 'ses_1' });
    await settle();
    const toggle = target.querySelector<HTMLElement>('[data-testid="todo-toggle"]');
    expect(toggle?.getAttribute('aria-expanded')).toBe('true');
    toggle?.click();
    flushSync();
    expect(target.querySelector('[data-testid="todo-dock"]')?.getAttribute('data-collapsed')).toBe('true');
    expect(target.querySelectorAll('[data-testid="todo-item"]')).toHaveLength(0);
    // Collapsed, the task in progress is still named.
    expect(toggle?.textContent).toContain('Write the fix');
    if (app) unmount(app);
    document.body.innerHTML = '';
    target = render(TodoDock, { sessionId: 'ses_1' });
    await settle();
    expect(target.querySelector('[data-testid="todo-toggle"]')?.getAttribute('aria-expanded')).toBe('false');
  });

  it('shows nothing for a session without todos', async () => {
    invoke.mockResolvedValue([]);
    const target = render(TodoDock, { sessionId: 'ses_1' });
    await settle();
    expect(target.querySelector('[data-testid="todo-dock"]')).toBeNull();
  });
});

describe('a session on a second server', () => {
  const down = { state: 'reconnecting', attempt: 1, retryInMs: 500 };
  const ready = { state: 'ready', url: 'http://127.0.0.1:2', version: '1.18.33', managed: false };
  function onSecond(connection: unknown) {
    store.sessions.set('ses_1', { id: 'ses_1', title: 'Implements', directory: DIR, serverId: 'srv_2' } as never);
    store.servers.set('srv_2', { id: 'srv_2', name: 'Second', kind: 'attached', saved: true, connection } as never);
  }
  afterEach(() => store.servers.clear());

  it('the todo dock reads the list again when its own server is back, not the main one', async () => {
    onSecond(down);
    invoke.mockResolvedValue([]);
    render(TodoDock, { sessionId: 'ses_1' });
    await settle();
    expect(asked().filter((r) => r.cmd === 'todos'), 'its server is down: nothing to read').toHaveLength(0);
    store.servers.set('srv_2', { ...store.servers.get('srv_2')!, connection: ready as never });
    flushSync();
    await settle();
    expect(asked().filter((r) => r.cmd === 'todos')).toHaveLength(1);
  });

  it('the Changes tab asks again when its own server reconnects', async () => {
    onSecond(ready);
    invoke.mockResolvedValue(changeSet());
    render(ChangesPanel, { sessionId: 'ses_1' });
    await settle();
    const before = asked().filter((r) => r.cmd === 'changes').length;
    expect(before).toBeGreaterThan(0);
    store.servers.set('srv_2', { ...store.servers.get('srv_2')!, connection: down as never });
    flushSync();
    await settle();
    store.servers.set('srv_2', { ...store.servers.get('srv_2')!, connection: ready as never });
    flushSync();
    await settle();
    expect(asked().filter((r) => r.cmd === 'changes').length).toBe(before + 1);
  });
});

describe('a deleted session', () => {
  it('has its Changes tab closed along with its chat tab', async () => {
    const { forgetSession } = await import('$lib/state/actions/sessions');
    store.tabs = [
      { mode: 'chat', dedupeKey: 'session:ses_1', label: 'Implements', sessionId: 'ses_1' },
      { mode: 'changes', dedupeKey: 'changes:ses_1', label: 'Changes', sessionId: 'ses_1' },
      { mode: 'changes', dedupeKey: 'changes:ses_2', label: 'Changes', sessionId: 'ses_2' },
    ];
    invoke.mockResolvedValue(null);
    forgetSession('ses_1');
    expect(asked()).toEqual([
      { cmd: 'closeTab', key: 'session:ses_1' },
      { cmd: 'closeTab', key: 'changes:ses_1' },
    ]);
    store.tabs = [];
  });
});
