// The "Needs you" list as drawn: one new item adds one row and leaves the others' elements as
// they were (a keyed list over items kept between changes), and a permission pushed live is
// drawn in the same task, not on the next frame.
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AttentionReason } from '$lib/types/AttentionReason';
import type { SessionView } from '$lib/types/SessionView';
import { snapshotOf } from './helpers/snapshot';

vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return { ...actual, invoke: vi.fn(async () => null) };
});

const { default: NeedsYou } = await import('$lib/components/sessions/NeedsYou.svelte');
const { store } = await import('$lib/state/store.svelte');

function session(id: string, ...attention: AttentionReason[]): SessionView {
  return { id, slug: id, projectID: 'p', directory: '/a', title: `Session ${id}`, time: { created: 1, updated: 2 }, attention };
}

function permission(requestId: string, since: number): AttentionReason {
  return { kind: 'permission', since, words: `bash ${requestId}`, requestId, questions: [] };
}

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  vi.unstubAllGlobals();
});

/** Applies a snapshot of `sessions` and mounts the list on it. */
function showWith(seq: number, sessions: SessionView[]) {
  store.applySnapshot({ ...snapshotOf(sessions, seq), settings: store.settings });
  const target = document.createElement('div');
  document.body.appendChild(target);
  app = mount(NeedsYou, { target });
  flushSync();
}

const rows = () => [...document.querySelectorAll<HTMLElement>('[data-testid="needs-you-item"]')];

describe('needs you list', () => {
  it('draws a live permission at once, as one new row, keeping the other rows', () => {
    // Frames never come: what is drawn was drawn without one.
    vi.stubGlobal('requestAnimationFrame', () => 1);
    vi.stubGlobal('cancelAnimationFrame', () => undefined);
    showWith(10, [session('ses_a', permission('per_a', 20)), session('ses_b', permission('per_b', 10)), session('ses_c')]);
    const before = rows();
    expect(before.map((r) => r.dataset.requestId)).toEqual(['per_a', 'per_b']);

    store.enqueue([{ seq: 11, change: { type: 'sessionUpserted', session: session('ses_c', permission('per_c', 30)) } }]);
    flushSync();
    const after = rows();
    expect(after.map((r) => r.dataset.requestId)).toEqual(['per_c', 'per_a', 'per_b']);
    expect(after[1]).toBe(before[0]);
    expect(after[2]).toBe(before[1]);
    expect(after[0].querySelectorAll('[data-testid="needs-you-permit"]')).toHaveLength(3);
    expect(after[0].querySelector('[data-testid="needs-you-words"]')?.textContent).toBe('bash per_c');
  });

  it('builds the first rows of a long list and the rest on asking, always with the session shown', async () => {
    const { ui } = await import('$lib/state/ui.svelte');
    const many = Array.from({ length: 30 }, (_, i) => session(`ses_${String(i).padStart(2, '0')}`, permission(`per_${i}`, 100 + i)));
    showWith(20, many);
    // Newest first: per_29 .. per_18, then the button for the 18 others.
    expect(rows().map((r) => r.dataset.requestId)).toEqual(Array.from({ length: 12 }, (_, i) => `per_${29 - i}`));
    const more = () => document.querySelector<HTMLButtonElement>('[data-testid="needs-you-more"]');
    expect(more()?.textContent).toBe('Show 18 more');
    // The count on the filter still says all of them.
    expect(document.querySelector('.count')?.textContent).toBe('30');

    // The session shown is among the rows even when it is further down.
    ui.selectedSessionId = 'ses_02';
    flushSync();
    expect(rows()).toHaveLength(28);
    expect(rows().at(-1)?.dataset.requestId).toBe('per_2');
    ui.selectedSessionId = null;
    flushSync();

    more()?.click();
    flushSync();
    expect(rows()).toHaveLength(24);
    expect(more()?.textContent).toBe('Show 6 more');
    more()?.click();
    flushSync();
    expect(rows()).toHaveLength(30);
    expect(more()).toBeNull();
  });

  it('counts past 99 as "99+" and moves between the filters with the arrow keys, one tab stop for all', async () => {
    const { ui } = await import('$lib/state/ui.svelte');
    ui.sessionFilter = 'all';
    const many = Array.from({ length: 120 }, (_, i) => session(`ses_${String(i).padStart(3, '0')}`, permission(`per_${i}`, 100 + i)));
    showWith(30, many);
    const count = document.querySelector<HTMLElement>('[data-testid="needs-you-count"]');
    expect(count?.textContent).toBe('99+');
    expect(count?.dataset.count).toBe('120');
    expect(count?.title).toBe('120');

    const chips = () => [...document.querySelectorAll<HTMLButtonElement>('[data-testid="sidebar-filter"]')];
    const tabStops = () => chips().filter((c) => c.tabIndex === 0).map((c) => c.dataset.filter);
    expect(tabStops()).toEqual(['all']);
    const press = (key: string) => {
      const event = new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true });
      (document.activeElement ?? chips()[0]).dispatchEvent(event);
      flushSync();
      return event.defaultPrevented;
    };
    chips()[0].focus();
    expect(press('ArrowRight')).toBe(true);
    expect(ui.sessionFilter).toBe('needsYou');
    expect(document.activeElement).toBe(chips()[1]);
    expect(tabStops()).toEqual(['needsYou']);
    press('End');
    expect(ui.sessionFilter).toBe('done');
    press('ArrowRight');
    expect(ui.sessionFilter).toBe('all');
    press('ArrowLeft');
    expect(ui.sessionFilter).toBe('done');
    press('Home');
    expect(ui.sessionFilter).toBe('all');
    expect(document.activeElement).toBe(chips()[0]);
    // Other keys are left to the page (Tab leaves the group).
    expect(press('Tab')).toBe(false);
    expect(ui.sessionFilter).toBe('all');
  });
});
