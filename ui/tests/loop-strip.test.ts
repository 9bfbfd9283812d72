// The loop strip above the composer after the loop ended: it says why it stopped and can be
// hidden (remembered per loop); in the review session Start stays.
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return { ...actual, invoke: vi.fn(async () => null) };
});

const { default: LoopControls } = await import('$lib/components/review/LoopControls.svelte');
const { store } = await import('$lib/state/store.svelte');
const { setLocale } = await import('$lib/i18n/index.svelte');

type LoopState = import('$lib/types/LoopState').LoopState;

const ended: LoopState = {
  id: 'loop_1',
  originalSessionId: 'ses_impl',
  reviewSessionId: 'ses_rev',
  round: 2,
  maxRounds: 5,
  threshold: 'major',
  phase: 'reviewing',
  startedAt: 1,
  phaseStartedAt: 1,
  sentMessageIds: [],
  claimedUnchanged: [],
  stop: { reason: 'clean', detail: '', findingIds: [], at: 1 },
  ended: true,
} as unknown as LoopState;

let apps: ReturnType<typeof mount>[] = [];
function render(sessionId: string) {
  const target = document.createElement('div');
  document.body.appendChild(target);
  apps.push(mount(LoopControls, { target, props: { sessionId } }));
  flushSync();
  return target;
}

beforeEach(() => {
  setLocale('en');
  localStorage.clear();
  store.sessions.set('ses_impl', { id: 'ses_impl', title: 'Impl', directory: '/p', link: { kind: 'original', otherSessionId: 'ses_rev', otherExists: true } } as never);
  store.sessions.set('ses_rev', { id: 'ses_rev', title: 'Rev', directory: '/p', link: { kind: 'review', otherSessionId: 'ses_impl', otherExists: true } } as never);
  store.loops.set('ses_impl', ended);
});

afterEach(() => {
  for (const a of apps) unmount(a);
  apps = [];
  document.body.innerHTML = '';
  store.loops.clear();
});

describe('an ended review loop', () => {
  it('can be hidden above the composer, and stays hidden', () => {
    let target = render('ses_impl');
    expect(target.querySelector('[data-testid="loop-progress"]')?.getAttribute('data-state')).toBe('stopped');
    target.querySelector<HTMLElement>('[data-testid="loop-dismiss"]')!.click();
    flushSync();
    expect(target.querySelector('[data-testid="loop-progress"]')).toBeNull();
    for (const a of apps) unmount(a);
    apps = [];
    target = render('ses_impl');
    expect(target.querySelector('[data-testid="loop-progress"]')).toBeNull();
    // The review session keeps Start, without the old loop's line.
    const review = render('ses_rev');
    expect(review.querySelector('[data-testid="loop-progress"]')?.getAttribute('data-state')).toBe('none');
    expect(review.querySelector('[data-testid="loop-start"]')).not.toBeNull();
  });

  it('a running loop has no dismiss', () => {
    store.loops.set('ses_impl', { ...ended, ended: false, stop: undefined });
    const target = render('ses_impl');
    expect(target.querySelector('[data-testid="loop-dismiss"]')).toBeNull();
  });
});

describe('panel tabs with the same title', () => {
  it('are told apart by their folder, else by the end of the session id', async () => {
    const { distinctLabels } = await import('$lib/tabLabels');
    const labels = distinctLabels([
      { key: 'a', label: 'Fix the parser', directory: '/home/dev/api', sessionId: 'ses_aaaa1111' },
      { key: 'b', label: 'Fix the parser', directory: '/home/dev/web', sessionId: 'ses_bbbb2222' },
      { key: 'c', label: 'Reviews' },
      { key: 'd', label: 'Plan', directory: '/home/dev/api', sessionId: 'ses_cccc3333' },
      { key: 'e', label: 'Plan', directory: '/home/dev/api', sessionId: 'ses_dddd4444' },
    ]);
    expect([...labels.values()]).toEqual(['Fix the parser · api', 'Fix the parser · web', 'Reviews', 'Plan · #3333', 'Plan · #4444']);
  });
});

describe('the side panel', () => {
  it('shows two same-titled session tabs with different labels', async () => {
    const { default: ContextPanel } = await import('$lib/components/layout/ContextPanel.svelte');
    store.sessions.set('ses_aaaa1111', { id: 'ses_aaaa1111', title: 'Fix the parser', directory: '/home/dev/api' } as never);
    store.sessions.set('ses_bbbb2222', { id: 'ses_bbbb2222', title: 'Fix the parser', directory: '/home/dev/web' } as never);
    store.tabs = [
      { mode: 'chat', dedupeKey: 'session:ses_aaaa1111', label: 'Fix the parser', sessionId: 'ses_aaaa1111', directory: '/home/dev/api' },
      { mode: 'chat', dedupeKey: 'session:ses_bbbb2222', label: 'Fix the parser', sessionId: 'ses_bbbb2222', directory: '/home/dev/web' },
    ] as never;
    store.activeTab = null;
    const target = document.createElement('div');
    document.body.appendChild(target);
    apps.push(mount(ContextPanel, { target }));
    flushSync();
    const labels = [...target.querySelectorAll('[data-testid="context-tab"] .label')].map((l) => l.textContent);
    expect(labels).toHaveLength(2);
    expect(new Set(labels).size).toBe(2);
    store.tabs = [];
  }, 30_000);
});

describe('a loop stopped on a dispute', () => {
  it('is decided from the strip: accept the dispute, keep it with a note, or one more round', async () => {
    const { invoke } = await import('$lib/host');
    const sent = vi.mocked(invoke);
    sent.mockClear();
    store.loops.set('ses_impl', { ...ended, stop: { reason: 'disputed', detail: 'F2 disputed', findingIds: ['F2'], at: 1 } });
    let target = render('ses_rev');
    expect(target.querySelector('[data-testid="loop-decide"]')).not.toBeNull();
    target.querySelector<HTMLElement>('[data-testid="loop-decide-withdraw"]')!.click();
    await vi.waitFor(() => expect(sent.mock.calls.map((c) => c[0])).toContainEqual({ cmd: 'withdrawFindings', sessionId: 'ses_rev', findingIds: ['F2'] }));

    // A clean stop offers no decision.
    for (const a of apps) unmount(a);
    apps = [];
    localStorage.clear();
    store.loops.set('ses_impl', { ...ended, id: 'loop_2' });
    target = render('ses_rev');
    expect(target.querySelector('[data-testid="loop-decide"]')).toBeNull();

    // A stall: keep with a note goes to the implementer; one more round starts a loop of one.
    for (const a of apps) unmount(a);
    apps = [];
    store.loops.set('ses_impl', { ...ended, id: 'loop_3', stop: { reason: 'stalled', detail: '', findingIds: ['F1'], at: 1 } });
    target = render('ses_rev');
    expect(target.querySelector('[data-testid="loop-decide-withdraw"]')).toBeNull();
    const input = target.querySelector<HTMLInputElement>('[data-testid="loop-decide-note"]')!;
    input.value = 'Please add the test first';
    input.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
    target.querySelector<HTMLElement>('[data-testid="loop-decide-keep"]')!.click();
    await vi.waitFor(() =>
      expect(sent.mock.calls.map((c) => c[0])).toContainEqual(expect.objectContaining({ cmd: 'sendPrompt', sessionId: 'ses_impl', text: 'F1: Please add the test first' })),
    );
  });
});
