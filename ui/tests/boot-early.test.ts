// In a browser the first snapshot is asked beside the change stream (the first frame does not
// wait for the stream to open), and asked again once the stream is open, after the first.
import { describe, expect, it, vi } from 'vitest';
import type { Request } from '$lib/types/Request';
import type { Snapshot } from '$lib/types/Snapshot';

const asked: string[] = [];
let open: () => void = () => undefined;
let answerFirst: () => void = () => undefined;

const snapshot = (seq: number) =>
  ({
    seq,
    connection: { state: 'ready', url: 'http://127.0.0.1:4096', version: '1', managed: false },
    sessions: [{ id: `ses_${seq}`, slug: 's', projectID: 'p', directory: '/w', title: `At ${seq}`, time: { created: 0, updated: seq } }],
    statuses: {},
    permissions: [],
    settings: { theme: 'light', locale: 'en' },
    tabs: [],
    flows: [],
    sessionErrors: {},
  }) as unknown as Snapshot;

vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return {
    ...actual,
    invoke: async (request: Request) => {
      if (request.cmd !== 'snapshot') return null;
      asked.push('snapshot');
      // The first answer waits until the test lets it go; later ones answer at once.
      if (asked.length === 1) await new Promise<void>((r) => (answerFirst = r));
      return snapshot(asked.length);
    },
    subscribe: (_onChanges: unknown, onState?: (s: 'open' | 'lost') => void) => {
      open = () => onState?.('open');
      return () => undefined;
    },
  };
});

const { boot } = await import('$lib/state/actions/boot');
const { store } = await import('$lib/state/store.svelte');

describe('boot in a browser', () => {
  it('asks the snapshot before the stream is open, and again after the first answer once it is', async () => {
    const stop = boot();
    expect(asked).toEqual(['snapshot']);
    // The stream opens while the first is in flight: no second request yet (two could cross).
    open();
    await Promise.resolve();
    expect(asked).toHaveLength(1);
    answerFirst();
    await vi.waitFor(() => expect(asked).toHaveLength(2));
    await vi.waitFor(() => expect(store.seq).toBe(2));
    expect([...store.sessions.keys()]).toEqual(['ses_2']);
    stop();
  });
});
