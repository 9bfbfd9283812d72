// One snapshot at start in a browser: the page's first script asks it, the app applies it
// before its first render, and the change stream's `start` (the number it starts after) says
// whether anything could have fallen between the two; only then is it asked again.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Request } from '$lib/types/Request';
import { snapshotOf } from './helpers/snapshot';

const asked: string[] = [];
let seq = 7;
let open: (from?: number) => void = () => undefined;

const snapshot = (at: number) =>
  snapshotOf([{ id: `ses_${at}`, slug: 's', projectID: 'p', directory: '/w', title: `At ${at}`, time: { created: 0, updated: at } }], at);

const answer = async (request: Request) => {
  if (request.cmd !== 'snapshot') return null;
  asked.push('snapshot');
  return snapshot(seq);
};

vi.mock('$lib/host/web', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host/web')>();
  return { ...actual, isDesktop: false, webInvoke: answer };
});

vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return {
    ...actual,
    isDesktop: false,
    invoke: answer,
    subscribe: (_onChanges: unknown, onState?: (s: 'open' | 'lost', from?: number) => void) => {
      open = (from) => onState?.('open', from);
      return () => undefined;
    },
  };
});

const { askEarlySnapshot } = await import('$lib/host/early');
const { applyEarlySnapshot, awaitEarlySnapshot, boot } = await import('$lib/state/actions/boot');
const { store } = await import('$lib/state/store.svelte');

beforeEach(() => {
  asked.length = 0;
});

describe('boot with the early snapshot', () => {
  it('applies the early snapshot before the app renders and asks no other when the stream starts at its number', async () => {
    seq = 7;
    askEarlySnapshot();
    await awaitEarlySnapshot();
    applyEarlySnapshot();
    // Applied before boot (the app's first render comes after this).
    expect(store.ready).toBe(true);
    expect(store.seq).toBe(7);
    const stop = boot();
    open(7);
    await new Promise((r) => setTimeout(r, 0));
    expect(asked).toEqual(['snapshot']);
    stop();
  });

  it('asks again when the stream starts after the snapshot (changes fell between them)', async () => {
    seq = 9;
    const stop = boot();
    await vi.waitFor(() => expect(store.seq).toBe(9));
    open(12);
    await vi.waitFor(() => expect(asked).toEqual(['snapshot', 'snapshot']));
    stop();
  });

  it('asks no second snapshot when the stream starts before the first one', async () => {
    seq = 20;
    const stop = boot();
    await vi.waitFor(() => expect(store.seq).toBe(20));
    open(18);
    await new Promise((r) => setTimeout(r, 0));
    expect(asked).toEqual(['snapshot']);
    stop();
  });
});

describe('the early request', () => {
  it('is asked once a page, whichever script asks first, even after boot took it', async () => {
    // The first test asked it already (the app's script and the first one both call this).
    askEarlySnapshot();
    askEarlySnapshot();
    await new Promise((r) => setTimeout(r, 0));
    expect(asked).toEqual([]);
  });
});
