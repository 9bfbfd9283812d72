// The sidebar reuses a row for the session that comes in when another goes (a keystroke in
// the search box swaps the rows in view): the row shows the new session, and what the row held
// for the old one (an open rename, its menu) does not carry over to the new one.
import { flushSync, mount, tick, unmount } from 'svelte';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mountSidebar } from './helpers/sidebar';
import { numberedSessions } from './helpers/snapshot';

const calls: { cmd: string }[] = [];
vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return {
    ...actual,
    invoke: async (req: { cmd: string }) => {
      calls.push(req);
      return null;
    },
    subscribe: () => () => undefined,
  };
});

const { store } = await import('$lib/state/store.svelte');
const { ui } = await import('$lib/state/ui.svelte');

const sessions = numberedSessions(200);

let app: ReturnType<typeof mount>;
const $$ = (selector: string) => [...document.querySelectorAll<HTMLElement>(selector)];
const settle = async () => {
  await tick();
  flushSync();
};

beforeAll(async () => {
  app = await mountSidebar(sessions);
});

afterAll(() => unmount(app));

describe('sidebar rows reused as the filter changes', () => {
  it('shows the new session in the row the old one had, without the old rename', async () => {
    const first = $$('[data-testid="session-item"]')[0];
    expect(first.dataset.sessionId).toBe('ses_199');
    first.querySelector<HTMLButtonElement>('.main')?.dispatchEvent(new MouseEvent('dblclick', { bubbles: true }));
    await settle();
    const field = first.querySelector<HTMLInputElement>('[data-testid="rename-input"]');
    expect(field).not.toBeNull();
    if (field) {
      field.value = 'Not for the next session';
      field.dispatchEvent(new Event('input', { bubbles: true }));
    }
    ui.search = 'session 1';
    await settle();
    // ses_199 still matches: its row and its rename stay.
    expect($$('[data-testid="session-item"]')[0]).toBe(first);
    expect(first.querySelector('[data-testid="rename-input"]')).not.toBeNull();
    // Filtered out: the row now shows a session of the new list (reused, not rebuilt)...
    ui.search = 'session 0';
    await settle();
    expect($$('[data-testid="session-item"]')[0].dataset.sessionId).toBe('ses_099');
    expect(first.isConnected).toBe(true);
    expect(first.dataset.sessionId).toMatch(/^ses_0\d\d$/);
    expect(first.querySelector('.main')?.getAttribute('title')).toBe(sessions.find((s) => s.id === first.dataset.sessionId)?.title);
    // ...with no rename field carried over, and nothing renamed.
    expect(document.querySelector('[data-testid="rename-input"]')).toBeNull();
    expect(calls.filter((c) => c.cmd === 'renameSession')).toEqual([]);
    ui.search = '';
    await settle();
  });

  it('closes the menu of a row that now shows another session', async () => {
    const first = $$('[data-testid="session-item"]')[0];
    first.querySelector<HTMLButtonElement>('[data-testid="session-menu"]')?.click();
    await settle();
    expect(document.querySelector('[role="menu"]')).not.toBeNull();
    ui.search = 'session 0';
    await settle();
    expect(first.isConnected && first.dataset.sessionId !== 'ses_199').toBe(true);
    expect(document.querySelector('[role="menu"]')).toBeNull();
    ui.search = '';
    await settle();
  });

  it('does not leave the keyboard focus on a row that now shows another session', async () => {
    const first = $$('[data-testid="session-item"]')[0];
    const button = first.querySelector<HTMLButtonElement>('.main');
    button?.focus();
    expect(document.activeElement).toBe(button);
    ui.search = 'session 0';
    await settle();
    expect(first.isConnected && first.dataset.sessionId !== 'ses_199').toBe(true);
    expect(first.contains(document.activeElement)).toBe(false);
    ui.search = '';
    await settle();
  });

  it('opens a collapsed group while searching, and folds it again after', async () => {
    const key = document.querySelector<HTMLElement>('[data-testid="session-group"]')?.dataset.key ?? '';
    ui.toggleGroup(key);
    await settle();
    expect($$('[data-testid="session-item"]')).toHaveLength(0);
    expect(ui.sidebarOrder).toHaveLength(0);
    ui.search = 'session 19';
    await settle();
    expect($$('[data-testid="session-item"]').map((r) => r.dataset.sessionId)).toContain('ses_199');
    expect(ui.sidebarOrder).toHaveLength(10);
    ui.search = '';
    await settle();
    expect($$('[data-testid="session-item"]')).toHaveLength(0);
    ui.toggleGroup(key);
    await settle();
    expect($$('[data-testid="session-item"]').length).toBeGreaterThan(5);
    expect(ui.sidebarOrder).toHaveLength(200);
  });
});
