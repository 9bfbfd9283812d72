// The sidebar with many sessions: it builds the rows in view, not all of them, and the
// filter, the navigation order and the counts still cover every session.
import { flushSync, mount, tick, unmount } from 'svelte';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mountSidebar } from './helpers/sidebar';
import { numberedSessions } from './helpers/snapshot';

vi.mock('$lib/host', async (importOriginal) => (await import('./helpers/sidebar')).quietHost(await importOriginal<object>()));

const { ui } = await import('$lib/state/ui.svelte');

const N = 400;

let app: ReturnType<typeof mount>;
const $$ = (selector: string) => [...document.querySelectorAll<HTMLElement>(selector)];

beforeAll(async () => {
  app = await mountSidebar(numberedSessions(N));
});

afterAll(() => unmount(app));

describe('sidebar with many sessions', () => {
  it('builds the rows that fill the view, newest first, and keeps the height of the others', () => {
    const rows = $$('[data-testid="session-item"]');
    expect(rows.length).toBeGreaterThan(5);
    expect(rows.length).toBeLessThan(60);
    expect(rows[0].dataset.sessionId).toBe('ses_399');
    const spacers = $$('.spacer');
    expect(spacers).toHaveLength(1);
    expect(parseFloat(spacers[0].style.height)).toBeGreaterThan((N - rows.length - 1) * 40);
    // The group's count and the navigation order cover every session.
    expect(document.querySelector('[data-testid="session-group"] .count')?.textContent).toBe(String(N));
    expect(ui.sidebarOrder).toHaveLength(N);
  });

  it('filters as the user types, the rows built being the matches', async () => {
    ui.search = 'session 12';
    await tick();
    flushSync();
    const ids = $$('[data-testid="session-item"]').map((r) => r.dataset.sessionId);
    expect(ids).toEqual(['ses_129', 'ses_128', 'ses_127', 'ses_126', 'ses_125', 'ses_124', 'ses_123', 'ses_122', 'ses_121', 'ses_120']);
    expect($$('.spacer')).toHaveLength(0);
    ui.search = '';
    await tick();
    flushSync();
    expect($$('[data-testid="session-item"]').length).toBeLessThan(60);
  });

  it('walks the whole list with the arrow keys, Home and End, building a row out of view before it takes the focus', async () => {
    const focused = () => (document.activeElement as HTMLElement | null)?.closest<HTMLElement>('[data-testid="session-item"]')?.dataset.sessionId;
    const press = async (key: string, shiftKey = false) => {
      const event = new KeyboardEvent('keydown', { key, shiftKey, bubbles: true, cancelable: true });
      document.activeElement?.dispatchEvent(event);
      await tick();
      flushSync();
      await tick();
      return event.defaultPrevented;
    };
    document.querySelector<HTMLElement>('[data-testid="session-item"][data-session-id="ses_399"] .main')?.focus();
    expect(focused()).toBe('ses_399');
    expect(await press('ArrowDown')).toBe(true);
    expect(focused()).toBe('ses_398');
    expect(await press('ArrowUp')).toBe(true);
    expect(focused()).toBe('ses_399');
    // Nothing above the first row: the key is left alone.
    expect(await press('ArrowUp')).toBe(false);
    // The last row is not built until End asks for it.
    expect(document.querySelector('[data-testid="session-item"][data-session-id="ses_000"]')).toBeNull();
    expect(await press('End')).toBe(true);
    expect(focused()).toBe('ses_000');
    expect(await press('ArrowUp')).toBe(true);
    expect(focused()).toBe('ses_001');
    expect(await press('Home')).toBe(true);
    expect(focused()).toBe('ses_399');
    // With a modifier the key is not the list's (Alt+Up/Down selects a session).
    expect(await press('ArrowDown', true)).toBe(false);
    expect(focused()).toBe('ses_399');
    expect(await press('ArrowDown')).toBe(true);
    expect(focused()).toBe('ses_398');
  });
});
