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

describe('a loop stopped on a dispute, decided on the finding', () => {
  const findings = {
    reviewSessionId: 'ses_rev',
    originalSessionId: 'ses_impl',
    rounds: [{ round: 1, messageId: 'msg_r1', at: 1 }],
    findings: [
      { id: 'F1', severity: 'major', title: 'panics on empty', status: 'open', firstRound: 1, messageId: 'msg_r1', claimedUnchanged: false, history: [] },
      { id: 'F2', severity: 'major', title: 'no test', status: 'disputed', firstRound: 1, messageId: 'msg_r1', claimedUnchanged: false, history: [] },
    ],
  };

  async function renderBoth(loopId: string) {
    const { default: FindingsList } = await import('$lib/components/review/FindingsList.svelte');
    const { invoke } = await import('$lib/host');
    vi.mocked(invoke).mockImplementation(async (req) => ((req as { cmd: string }).cmd === 'listFindings' ? findings : null) as never);
    store.findings.set('ses_rev', findings as never);
    store.loops.set('ses_impl', { ...ended, id: loopId, stop: { reason: 'disputed', detail: 'F2 disputed', findingIds: ['F2'], at: 1 } });
    const target = document.createElement('div');
    document.body.appendChild(target);
    apps.push(mount(FindingsList, { target, props: { sessionId: 'ses_rev' } }));
    flushSync();
    const strip = render('ses_rev');
    return { target, strip, sent: vi.mocked(invoke) };
  }

  it('offers the strip\'s decision on the disputed finding only, sends the same requests, and the strip follows', async () => {
    const { target, strip, sent } = await renderBoth('loop_f1');
    const row = (id: string) => target.querySelector(`[data-testid="finding-row"][data-finding-id="${id}"]`)!;
    expect(row('F1').querySelector('[data-testid="finding-decide"]')).toBeNull();
    const decide = row('F2').querySelector('[data-testid="finding-decide"]')!;
    expect(decide).not.toBeNull();
    expect(decide.querySelector('[data-testid="loop-decide-withdraw"]')).not.toBeNull();
    expect(decide.querySelector('[data-testid="loop-decide-note"]')?.getAttribute('aria-label')).toBe('A note to the implementer on F2');

    // Keep with a note, sent with Enter: the implementer gets the same words the strip sends.
    const input = decide.querySelector<HTMLInputElement>('[data-testid="loop-decide-note"]')!;
    input.value = 'callers pass user input';
    input.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
    input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    await vi.waitFor(() =>
      expect(sent.mock.calls.map((c) => c[0])).toContainEqual(expect.objectContaining({ cmd: 'sendPrompt', sessionId: 'ses_impl', text: 'F2: callers pass user input' })),
    );
    // Decided: neither the finding nor the strip offers it again.
    await vi.waitFor(() => expect(row('F2').querySelector('[data-testid="finding-decide"]')).toBeNull());
    expect(strip.querySelector('[data-testid="loop-decide"]')).toBeNull();
  });

  it('keeps the note when sending it fails, and one more round from the finding starts a loop of one', async () => {
    const { target, sent } = await renderBoth('loop_f2');
    const decide = () => target.querySelector('[data-testid="finding-row"][data-finding-id="F2"] [data-testid="finding-decide"]')!;
    sent.mockImplementation(async (req) => {
      const cmd = (req as { cmd: string }).cmd;
      if (cmd === 'sendPrompt') throw { code: 'notConnected', message: 'the server is down' };
      return (cmd === 'listFindings' ? findings : cmd === 'startLoop' ? { ...ended, id: 'loop_next', ended: false, stop: undefined } : null) as never;
    });
    const input = decide().querySelector<HTMLInputElement>('[data-testid="loop-decide-note"]')!;
    input.value = 'please keep it';
    input.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
    decide().querySelector<HTMLElement>('[data-testid="loop-decide-keep"]')!.click();
    await vi.waitFor(() => expect(sent.mock.calls.some((c) => (c[0] as { cmd: string }).cmd === 'sendPrompt')).toBe(true));
    await vi.waitFor(() => expect(decide().getAttribute('data-busy')).toBe('false'));
    expect(decide().querySelector<HTMLInputElement>('[data-testid="loop-decide-note"]')!.value).toBe('please keep it');

    decide().querySelector<HTMLElement>('[data-testid="loop-decide-round"]')!.click();
    await vi.waitFor(() => expect(sent.mock.calls.map((c) => c[0])).toContainEqual({ cmd: 'startLoop', sessionId: 'ses_rev', maxRounds: 1 }));
  });
});
