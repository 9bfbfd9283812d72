import { describe, expect, it } from 'vitest';
import { anchorAt, computeOffsets, indexAt, isAtBottom, scrollTopFor, visibleRange } from '$lib/virtual';

const keys = (n: number) => Array.from({ length: n }, (_, i) => `k${i}`);

describe('virtual list math', () => {
  it('computes offsets from measured and estimated heights', () => {
    const heights = new Map([['k1', 50]]);
    const offsets = computeOffsets(keys(3), heights, 100);
    expect([...offsets]).toEqual([0, 100, 150, 250]);
  });

  it('finds the item at a position', () => {
    const offsets = computeOffsets(keys(5), new Map(), 100); // 0,100,...,500
    expect(indexAt(offsets, -5)).toBe(0);
    expect(indexAt(offsets, 0)).toBe(0);
    expect(indexAt(offsets, 99.9)).toBe(0);
    expect(indexAt(offsets, 100)).toBe(1);
    expect(indexAt(offsets, 499)).toBe(4);
    expect(indexAt(offsets, 10_000)).toBe(4);
  });

  it('returns the visible range with overscan', () => {
    const offsets = computeOffsets(keys(100), new Map(), 100); // total 10,000
    expect(visibleRange(offsets, 0, 300, 0)).toEqual({ start: 0, end: 3 });
    expect(visibleRange(offsets, 250, 300, 0)).toEqual({ start: 2, end: 6 });
    expect(visibleRange(offsets, 250, 300, 200)).toEqual({ start: 0, end: 8 });
    expect(visibleRange(offsets, 9_700, 300, 0)).toEqual({ start: 97, end: 100 });
    expect(visibleRange(offsets, 20_000, 300, 0)).toEqual({ start: 99, end: 100 });
  });

  it('handles empty lists and variable heights', () => {
    expect(visibleRange(computeOffsets([], new Map(), 100), 0, 500, 100)).toEqual({ start: 0, end: 0 });
    const heights = new Map([
      ['k0', 10],
      ['k1', 1000],
      ['k2', 10],
    ]);
    const offsets = computeOffsets(keys(3), heights, 100);
    expect(visibleRange(offsets, 500, 100, 0)).toEqual({ start: 1, end: 2 });
  });

  it('renders a 5,000-item list as a handful of rows', () => {
    const offsets = computeOffsets(keys(5000), new Map(), 120);
    const bottom = offsets[5000] - 800;
    const range = visibleRange(offsets, bottom, 800, 900);
    expect(range.end).toBe(5000);
    expect(range.end - range.start).toBeLessThan(25);
  });

  it('keeps an anchor still when items are prepended or re-measured above it', () => {
    const ks = keys(10);
    const before = computeOffsets(ks, new Map(), 100);
    const anchor = anchorAt(ks, before, 530)!;
    expect(anchor).toEqual({ key: 'k5', delta: 30 });
    // Three items prepended and one above re-measured: the anchor moves down by their heights.
    const after = ['n0', 'n1', 'n2', ...ks];
    const offsets = computeOffsets(after, new Map([['k2', 160]]), 100);
    const index = new Map(after.map((k, i) => [k, i]));
    expect(scrollTopFor(anchor, index, offsets)).toBe(300 + 500 + 60 + 30);
    expect(scrollTopFor({ key: 'gone', delta: 0 }, index, offsets)).toBeNull();
  });

  it('knows when the view is at the bottom', () => {
    expect(isAtBottom(700, 300, 1000)).toBe(true);
    expect(isAtBottom(690, 300, 1000)).toBe(true);
    expect(isAtBottom(500, 300, 1000)).toBe(false);
  });
});
