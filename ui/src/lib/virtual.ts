// The arithmetic of the virtual message list: item offsets from measured (or estimated)
// heights, the range of items to render for a scroll position, and anchors that keep the
// view still when items above it change height or are prepended.

/** `offsets[i]` is the top of item i; `offsets[n]` is the total height. An item not measured
 * yet counts as `estimate` (one height for all, or item i's own guess). */
export function computeOffsets(
  keys: readonly string[],
  heights: ReadonlyMap<string, number>,
  estimate: number | ((i: number) => number),
): Float64Array {
  const offsets = new Float64Array(keys.length + 1);
  let y = 0;
  for (let i = 0; i < keys.length; i++) {
    offsets[i] = y;
    y += heights.get(keys[i]) ?? (typeof estimate === 'number' ? estimate : estimate(i));
  }
  offsets[keys.length] = y;
  return offsets;
}

/** Index of the item that contains position `y` (clamped to the list). */
export function indexAt(offsets: ArrayLike<number>, y: number): number {
  const n = offsets.length - 1;
  if (n <= 0) return 0;
  if (y <= 0) return 0;
  if (y >= offsets[n]) return n - 1;
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (offsets[mid] <= y) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Half-open range [start, end) of items to render: those intersecting the viewport, grown by
 * `overscan` pixels on both sides. */
export function visibleRange(
  offsets: ArrayLike<number>,
  scrollTop: number,
  viewportHeight: number,
  overscan: number,
): { start: number; end: number } {
  const n = offsets.length - 1;
  if (n <= 0) return { start: 0, end: 0 };
  const top = Math.max(0, scrollTop - overscan);
  const bottom = scrollTop + Math.max(0, viewportHeight) + overscan;
  const start = indexAt(offsets, top);
  let end = indexAt(offsets, bottom) + 1;
  // An item that starts exactly at the bottom edge is not visible.
  if (end - 1 > start && offsets[end - 1] >= bottom) end--;
  return { start, end: Math.min(n, Math.max(end, start + 1)) };
}

/** Which item the view is anchored to, and how far into it the viewport's top is. */
export interface Anchor {
  key: string;
  delta: number;
}

export function anchorAt(keys: readonly string[], offsets: ArrayLike<number>, scrollTop: number): Anchor | null {
  if (keys.length === 0) return null;
  const i = indexAt(offsets, scrollTop);
  return { key: keys[i], delta: scrollTop - offsets[i] };
}

/** The scrollTop that keeps `anchor` where it was, or null when its item is gone. */
export function scrollTopFor(anchor: Anchor, indexOf: ReadonlyMap<string, number>, offsets: ArrayLike<number>): number | null {
  const i = indexOf.get(anchor.key);
  if (i === undefined) return null;
  return offsets[i] + anchor.delta;
}

/** Whether a scroll position is (nearly) at the bottom. */
export function isAtBottom(scrollTop: number, viewportHeight: number, contentHeight: number, slack = 24): boolean {
  return scrollTop + viewportHeight >= contentHeight - slack;
}
