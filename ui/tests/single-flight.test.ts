// The single-flight refresh the Changes and Reviews tabs share: one round at a time, calls made
// meanwhile folded into exactly one more round, the start and end hooks once per flight.
import { describe, expect, it } from 'vitest';
import { singleFlight } from '$lib/singleFlight';

/** A round that waits until the test releases it. */
function gated() {
  const releases: Array<() => void> = [];
  let rounds = 0;
  const round = () =>
    new Promise<void>((resolve) => {
      rounds += 1;
      releases.push(resolve);
    });
  return { round, releases, rounds: () => rounds };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('singleFlight', () => {
  it('folds the calls made during a round into one more round', async () => {
    const g = gated();
    const events: string[] = [];
    const refresh = singleFlight(g.round, { onStart: () => events.push('start'), onEnd: () => events.push('end') });
    const first = refresh();
    await settle();
    expect(g.rounds()).toBe(1);
    await refresh();
    await refresh();
    await refresh();
    expect(g.rounds()).toBe(1);
    g.releases[0]();
    await settle();
    expect(g.rounds()).toBe(2);
    expect(events).toEqual(['start']);
    g.releases[1]();
    await first;
    expect(g.rounds()).toBe(2);
    expect(events).toEqual(['start', 'end']);
  });

  it('runs again for a call after the flight ended, and ends the flight when a round throws', async () => {
    let rounds = 0;
    const events: string[] = [];
    const refresh = singleFlight(
      async () => {
        rounds += 1;
        if (rounds === 1) throw new Error('boom');
      },
      { onStart: () => events.push('start'), onEnd: () => events.push('end') },
    );
    await expect(refresh()).rejects.toThrow('boom');
    await refresh();
    expect(rounds).toBe(2);
    expect(events).toEqual(['start', 'end', 'start', 'end']);
  });
});
