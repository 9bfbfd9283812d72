// A review loop that stops tells the user once, with its reason, read from the review
// session's attention as the backend pushes it; a snapshot (what was already there when the
// page started) is not news.
import { describe, expect, it, vi } from 'vitest';

const shown: unknown[] = [];
vi.mock('$lib/host/notifications', () => ({
  showNotification: vi.fn(async (n: unknown) => (shown.push(n), true)),
  onNotificationClick: vi.fn(),
  askNotificationPermission: vi.fn(async () => 'granted'),
  playSound: vi.fn(),
}));

const { sessionChanged } = await import('$lib/state/actions/notifications');

type SessionView = import('$lib/types/SessionView').SessionView;

const session: SessionView = {
  id: 'ses_rev', slug: 's', projectID: 'p', directory: '/a', title: 'Review: Login', time: { created: 1, updated: 2 },
  link: { kind: 'review', otherSessionId: 'ses_impl', otherExists: true },
  attention: [],
};

describe('loop notifications', () => {
  it('tells of a stop once, with the reason', async () => {
    vi.spyOn(document, 'hasFocus').mockReturnValue(false);
    const stopped: SessionView = {
      ...session,
      attention: [{ kind: 'loopStopped', since: Date.now(), words: 'F1 open three rounds', questions: [], stop: 'stalled' }],
    };
    sessionChanged(stopped, session);
    sessionChanged(stopped, stopped);
    sessionChanged({ ...stopped, title: 'Renamed' }, session);
    // Shown after the frame with the change, not in the change's own task.
    expect(shown).toEqual([]);
    await vi.waitFor(() =>
      expect(shown).toEqual([
        { title: 'Review loop stopped', body: 'Review: Login: stalled: no progress', sessionId: 'ses_rev', tag: 'loop:ses_rev' },
      ]),
    );
    await new Promise((r) => setTimeout(r, 150));
    expect(shown).toHaveLength(1);
  });
});
