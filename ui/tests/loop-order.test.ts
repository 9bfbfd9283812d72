// A loop's state comes pushed, listed after each snapshot, and as the answer to a start or a
// stop; whichever arrives last, the pair shows its newest loop at its furthest point.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { LoopState } from '$lib/types/LoopState';

let listed: LoopState[] = [];
let release: () => void = () => undefined;

vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return {
    ...actual,
    invoke: vi.fn(async (request: { cmd: string }) => {
      if (request.cmd !== 'listLoops') return null;
      // The listing is read now and answered later: changes are pushed meanwhile.
      const answer = listed.map((l) => ({ ...l }));
      await new Promise<void>((r) => (release = r));
      return answer;
    }),
  };
});

const { store } = await import('$lib/state/store.svelte');
const { loadLoops } = await import('$lib/state/actions/loops');
const { isNewerLoop } = await import('$lib/loopOrder');

function loop(over: Partial<LoopState> = {}): LoopState {
  return {
    id: 'lop_1',
    originalSessionId: 'ses_impl',
    reviewSessionId: 'ses_rev',
    round: 1,
    maxRounds: 5,
    threshold: 'major',
    phase: 'reviewing',
    startedAt: 100,
    phaseStartedAt: 100,
    sentMessageIds: ['msg_1'],
    claimedUnchanged: [],
    ended: false,
    costs: [],
    budget: {},
    ...over,
  } as LoopState;
}

let seq = 1;
const push = (state: LoopState) => {
  store.enqueue([{ seq: seq++, change: { type: 'loop', state } } as never]);
  store.flush();
};

beforeEach(() => {
  store.loops.clear();
  listed = [];
});

describe('a listing answered after a pushed change', () => {
  it('does not take an ended loop back to running', async () => {
    listed = [loop()];
    const loading = loadLoops();
    push(loop({ round: 2, phase: 'implementing', phaseStartedAt: 200, sentMessageIds: ['msg_1', 'msg_2'] }));
    push(loop({ round: 2, phaseStartedAt: 300, ended: true, stop: { reason: 'clean' } as never }));
    release();
    await loading;
    expect(store.loops.get('ses_impl')?.ended).toBe(true);
    expect(store.loops.get('ses_impl')?.round).toBe(2);
  });

  it('does not take a running loop back a round', async () => {
    listed = [loop()];
    const loading = loadLoops();
    push(loop({ round: 3, phaseStartedAt: 400, sentMessageIds: ['a', 'b', 'c'] }));
    release();
    await loading;
    expect(store.loops.get('ses_impl')?.round).toBe(3);
  });

  it('still brings what moved on while the stream was away', async () => {
    push(loop());
    listed = [loop({ round: 4, phaseStartedAt: 900, ended: true })];
    const loading = loadLoops();
    release();
    await loading;
    expect(store.loops.get('ses_impl')).toMatchObject({ round: 4, ended: true });
  });

  it('does not replace the pair\'s newer loop with its older one', async () => {
    listed = [loop({ id: 'lop_0', startedAt: 50, ended: true, round: 5 })];
    const loading = loadLoops();
    push(loop({ id: 'lop_1', startedAt: 100 }));
    release();
    await loading;
    expect(store.loops.get('ses_impl')?.id).toBe('lop_1');
  });
});

describe('isNewerLoop', () => {
  it('ranks the end first, then the round, the phase start, the prompts sent and the rounds paid', () => {
    expect(isNewerLoop(loop(), undefined)).toBe(true);
    expect(isNewerLoop(loop({ ended: true, round: 1 }), loop({ round: 2 }))).toBe(true);
    expect(isNewerLoop(loop({ round: 2, phaseStartedAt: 1 }), loop({ round: 1, phaseStartedAt: 9 }))).toBe(true);
    expect(isNewerLoop(loop({ phaseStartedAt: 200 }), loop({ phaseStartedAt: 100 }))).toBe(true);
    expect(isNewerLoop(loop({ sentMessageIds: ['a', 'b'] }), loop({ sentMessageIds: ['a'] }))).toBe(true);
    expect(isNewerLoop(loop({ costs: [{} as never] }), loop())).toBe(true);
    expect(isNewerLoop(loop(), loop())).toBe(false);
    expect(isNewerLoop(loop({ round: 1 }), loop({ round: 2 }))).toBe(false);
    expect(isNewerLoop(loop({ id: 'lop_2', startedAt: 300 }), loop({ ended: true, round: 9 }))).toBe(true);
  });
});
