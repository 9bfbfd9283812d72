// Where the sidebar's long list is scrolled to. A selected session is brought into view once,
// when it is selected: in the next frame (not in the click's task), and not again each time the
// list builds its row while the person scrolls or walks the rows with the keyboard. Where the
// engine keeps no scroll anchor (WebKit; jsdom has no `CSS.supports` either), a session put in
// above the view scrolls the list by its row, and what the person asked the list to show does not.
import { flushSync, mount, tick, unmount } from 'svelte';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { mountSidebar } from './helpers/sidebar';
import { numberedSessions, snapshotOf } from './helpers/snapshot';

vi.mock('$lib/host', async (importOriginal) => (await import('./helpers/sidebar')).quietHost(await importOriginal<object>()));

const { store } = await import('$lib/state/store.svelte');
const { ui } = await import('$lib/state/ui.svelte');

let frames: FrameRequestCallback[] = [];
/** The session of each row scrolled into view, in order. */
let scrolled: (string | undefined)[] = [];
let app: ReturnType<typeof mount>;

function runFrames() {
  const now = frames;
  frames = [];
  for (const cb of now) cb(0);
}

/** Lets Svelte, the frames and the timers run until nothing is left. */
async function settle() {
  for (let i = 0; i < 6; i++) {
    await tick();
    flushSync();
    runFrames();
    vi.runOnlyPendingTimers();
  }
}

const row = (id: string) => document.querySelector<HTMLElement>(`[data-testid="session-item"][data-session-id="${id}"]`);
const list = () => document.querySelector<HTMLElement>('[data-testid="session-list"]') as HTMLElement;

/** The list scrolled to `top` px, as the browser would report it. */
async function scrollListTo(top: number) {
  Object.defineProperty(list(), 'scrollTop', { value: top, writable: true, configurable: true });
  list().dispatchEvent(new Event('scroll'));
  await settle();
}

beforeAll(async () => {
  vi.useFakeTimers();
  vi.stubGlobal('requestAnimationFrame', (cb: FrameRequestCallback) => frames.push(cb));
  vi.stubGlobal('cancelAnimationFrame', () => undefined);
  Object.defineProperty(HTMLElement.prototype, 'scrollIntoView', {
    value(this: HTMLElement) {
      scrolled.push(this.closest<HTMLElement>('[data-testid="session-item"]')?.dataset.sessionId);
    },
    configurable: true,
  });
  app = await mountSidebar(numberedSessions(400));
  await settle();
});

beforeEach(() => {
  scrolled = [];
});

afterAll(() => {
  unmount(app);
  delete (HTMLElement.prototype as { scrollIntoView?: unknown }).scrollIntoView;
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('the selected session in a long list', () => {
  it('is brought into view in the next frame, not in the task that selected it', async () => {
    ui.selectedSessionId = 'ses_390';
    await tick();
    flushSync();
    // Reading layout here would lay out the transcript the click just built, in the click's task.
    expect(scrolled).toEqual([]);
    await settle();
    expect(scrolled).toContain('ses_390');
    expect(scrolled.every((id) => id === 'ses_390')).toBe(true);
  });

  it('far down the list: the list scrolls to its row, which is then brought fully into view', async () => {
    expect(row('ses_150')).toBeNull();
    ui.selectedSessionId = 'ses_150';
    await settle();
    expect(row('ses_150')).not.toBeNull();
    expect(scrolled).toContain('ses_150');
  });

  it('is not brought back into view when its row is built again as the person scrolls', async () => {
    await scrollListTo(0);
    expect(row('ses_150')).toBeNull();
    scrolled = [];
    // Scrolled to just below it: its row is built above the view (overscan), the view stays.
    const below = (400 - 150) * 46 + 150;
    await scrollListTo(below);
    expect(row('ses_150')).not.toBeNull();
    expect(scrolled).toEqual([]);
  });
});

describe('where the engine keeps no scroll anchor', () => {
  it('a session put in above the view scrolls the list by its row', async () => {
    await scrollListTo(5000);
    store.applySnapshot(snapshotOf(numberedSessions(401), 2));
    await settle();
    expect(row('ses_400')).toBeNull();
    expect(list().scrollTop).toBe(5000 + 46);
  });

  it('a search, a filter or a folded group leaves the list where it is', async () => {
    await scrollListTo(5000);
    // The rows in view (Session 29x-27x) match; the hundred above them do not.
    ui.search = 'Session 2';
    await settle();
    expect(list().scrollTop).toBe(5000);
    ui.search = '';
    await settle();
    expect(list().scrollTop).toBe(5000);
    ui.toggleGroup(document.querySelector<HTMLElement>('[data-testid="session-group"]')?.dataset.key ?? '');
    await settle();
    expect(list().scrollTop).toBe(5000);
    ui.toggleGroup(document.querySelector<HTMLElement>('[data-testid="session-group"]')?.dataset.key ?? '');
    await settle();
    expect(list().scrollTop).toBe(5000);
  });
});
