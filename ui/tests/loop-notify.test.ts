// A review loop that stops tells the user once, with its reason; its rounds are not "manual
// reviews"; a stop from before the page started is not news.
import { describe, expect, it, vi } from 'vitest';

const shown: unknown[] = [];
vi.mock('$lib/host/notifications', () => ({
  showNotification: vi.fn(async (n: unknown) => (shown.push(n), true)),
  onNotificationClick: vi.fn(),
  askNotificationPermission: vi.fn(async () => 'granted'),
}));

const { loopChanged, notifier } = await import('$lib/state/actions/notifications');
const { store } = await import('$lib/state/store.svelte');

type LoopState = import('$lib/types/LoopState').LoopState;

function loop(over: Partial<LoopState>): LoopState {
  return {
    id: 'loop_1',
    originalSessionId: 'ses_impl',
    reviewSessionId: 'ses_rev',
    round: 2,
    maxRounds: 5,
    threshold: 'minor',
    phase: 'reviewer',
    startedAt: Date.now() - 1000,
    phaseStartedAt: Date.now() - 500,
    sentMessageIds: [],
    claimedUnchanged: [],
    ended: false,
    ...over,
  } as LoopState;
}

describe('loop notifications', () => {
  it('tells of a stop once, with the reason and findings, and treats loop rounds as no manual review', () => {
    vi.spyOn(document, 'hasFocus').mockReturnValue(false);
    store.sessions.set('ses_rev', {
      id: 'ses_rev', slug: 's', projectID: 'p', directory: '/a', title: 'Review: Login', time: { created: 1, updated: 2 },
      link: { kind: 'review', otherSessionId: 'ses_impl', otherExists: true },
    });
    loopChanged(loop({}));
    notifier.turnFinished('ses_rev');
    expect(shown).toEqual([]);

    const stop = { reason: 'stalled' as const, detail: 'F1 open three rounds', findingIds: ['F1'], at: Date.now() };
    loopChanged(loop({ ended: true, stop }));
    loopChanged(loop({ ended: true, stop }));
    expect(shown).toEqual([
      { title: 'Review loop stopped', body: 'Review: Login: stalled: no progress (F1)', sessionId: 'ses_rev', tag: 'loop:ses_rev' },
    ]);

    // Ended now: the next turn is a manual review again.
    notifier.turnFinished('ses_rev');
    expect(shown).toHaveLength(2);

    // A loop that stopped long before this page started is not news.
    loopChanged(loop({ id: 'loop_old', ended: true, stop: { ...stop, at: Date.now() - 3_600_000 } }));
    expect(shown).toHaveLength(2);
  });
});
