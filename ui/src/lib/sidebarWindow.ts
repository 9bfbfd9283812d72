// Which sidebar rows to build: the sidebar (server headers, repository headings, group heads,
// session rows) laid out top to bottom as slots with heights, and, for each group, the slice of
// its rows that meets the view (plus overscan) with the height of the rows left out above and
// below it. Heads are always built (there are few); only rows are left out, so 900 sessions
// build the twenty-odd rows on screen.

import type { RowGroup } from './sidebarTree';
import { computeOffsets, visibleRange } from './virtual';
import type { PlacedGroup } from './worktrees';

/** Guessed heights (px) of what is not measured yet. */
export const SLOT_HEIGHT = {
  /** A session row (title and meta lines). */
  row: 46,
  /** A group's head, with its margins. */
  group: 32,
  /** A repository heading above its worktrees. */
  heading: 26,
  /** A server's header (several servers), with its margin. */
  server: 38,
} as const;

/** One part of the sidebar as laid out. */
export type SlotKind = keyof typeof SLOT_HEIGHT;

/** A section of the sidebar: one server's groups (or all groups, with a single server). */
export interface SidebarPart {
  /** The server's id when the sidebar shows server headers, else null. */
  server: string | null;
  placed: readonly PlacedGroup<RowGroup>[];
}

/** The sidebar as slots: keys (a row's key is its session id) and kinds, top to bottom. */
export interface SidebarSlots {
  keys: string[];
  kinds: SlotKind[];
  /** Index of each shown group's first row slot (where its rows would be). */
  firstRow: Map<string, number>;
  /** Slot of each session row shown. */
  rowAt: Map<string, number>;
}

/** Lays the sidebar out as slots; a collapsed group has its head only. */
export function sidebarSlots(parts: readonly SidebarPart[], collapsed: (groupKey: string) => boolean): SidebarSlots {
  const keys: string[] = [];
  const kinds: SlotKind[] = [];
  const firstRow = new Map<string, number>();
  const rowAt = new Map<string, number>();
  const add = (key: string, kind: SlotKind) => {
    keys.push(key);
    kinds.push(kind);
  };
  for (const part of parts) {
    if (part.server !== null) add(`server:${part.server}`, 'server');
    for (const { group, heading } of part.placed) {
      if (heading) add(`heading:${group.key}`, 'heading');
      add(`group:${group.key}`, 'group');
      firstRow.set(group.key, keys.length);
      if (collapsed(group.key)) continue;
      for (const row of group.rows) {
        rowAt.set(row.session.id, keys.length);
        add(row.session.id, 'row');
      }
    }
  }
  return { keys, kinds, firstRow, rowAt };
}

/**
 * Tops of the slots (`offsets[n]` is the total height): measured heights, else the guesses
 * (`rowGuess` for a session row, see [TypicalHeight]).
 */
export function slotOffsets(slots: SidebarSlots, measured: ReadonlyMap<string, number>, rowGuess: number = SLOT_HEIGHT.row): Float64Array {
  return computeOffsets(slots.keys, measured, (i) => (slots.kinds[i] === 'row' ? rowGuess : SLOT_HEIGHT[slots.kinds[i]]));
}

/**
 * The height most measured rows have: the guess for a row not built yet, so that a row built
 * for the first time (a filter, a scroll) measures what was guessed and moves nothing.
 */
export class TypicalHeight {
  /** The height most rows measured (the initial guess until rows are measured). */
  value: number;
  private readonly counts = new Map<number, number>();

  constructor(initial: number) {
    this.value = initial;
  }

  /** Counts a row's new height (and no longer its old one); true when [value] changed. */
  add(height: number, before: number | undefined): boolean {
    if (before !== undefined) {
      const n = (this.counts.get(before) ?? 0) - 1;
      if (n > 0) this.counts.set(before, n);
      else this.counts.delete(before);
    }
    this.counts.set(height, (this.counts.get(height) ?? 0) + 1);
    // The most common height; a tie keeps the current one (the guess does not flicker).
    let best = this.value;
    let most = this.counts.get(best) ?? 0;
    for (const [h, n] of this.counts) {
      if (n > most) {
        best = h;
        most = n;
      }
    }
    const changed = best !== this.value;
    this.value = best;
    return changed;
  }
}

/**
 * Whether measured rows change the layout: a row that had a height (or the guess, `guess`,
 * measured the first time) and now has another. A row measuring what was assumed changes nothing.
 */
export function heightsMoved(
  keys: readonly string[],
  before: readonly (number | undefined)[],
  measured: ReadonlyMap<string, number>,
  guess: number,
): boolean {
  return keys.some((key, i) => measured.get(key) !== (before[i] ?? guess));
}

/** A row measured at a new height, for [shiftAbove]. */
export interface RowChange {
  /** The row's top now (px, page coordinates). */
  top: number;
  /** Its height before: the height measured last, or the guess for a row measured the first time. */
  before: number;
  /** Its height now. */
  height: number;
}

/**
 * How far the rows in view moved down (px, negative: up) because rows wholly above the view
 * (whose top edge is at `viewTop`) changed height: a row built above the view, taller or shorter
 * than guessed, or one that grew. An engine with scroll anchoring (Chromium) scrolls by as much
 * itself; one without (WebKit, the desktop window) leaves the rows in view moved, so the list
 * scrolls by this to hold them still.
 */
export function shiftAbove(changes: readonly RowChange[], viewTop: number): number {
  let shift = 0;
  for (const c of [...changes].sort((a, b) => a.top - b.top)) {
    // Where its bottom was before it and the rows above it changed.
    if (c.top - shift + c.before <= viewTop + 0.5) shift += c.height - c.before;
  }
  return shift;
}

/**
 * How far the rows in view move (px) when the sidebar's slots change (a session put in, taken out
 * or moved), heights as they are: `offsetsBefore` lays `before` out with today's heights, so only
 * the change of slots counts (a row measured anew is [shiftAbove]'s). The median move of the rows
 * that met the view (`top`, `viewport`) and are still listed: a row that itself moved elsewhere
 * does not count. An engine without scroll anchoring (WebKit) leaves the rows in view moved by this.
 */
export function slotsShift(
  before: SidebarSlots,
  after: SidebarSlots,
  offsetsBefore: ArrayLike<number>,
  offsetsAfter: ArrayLike<number>,
  top: number,
  viewport: number,
): number {
  const inView = visibleRange(offsetsBefore, top, viewport, 0);
  const moves: number[] = [];
  for (let i = inView.start; i < inView.end; i++) {
    const j = before.kinds[i] === 'row' ? after.rowAt.get(before.keys[i]) : undefined;
    if (j !== undefined) moves.push(offsetsAfter[j] - offsetsBefore[i]);
  }
  if (moves.length === 0) return 0;
  moves.sort((a, b) => a - b);
  return moves[Math.floor((moves.length - 1) / 2)];
}

/** The slots to build for a scroll position: [start, end). */
export function slotRange(
  offsets: ArrayLike<number>,
  scrollTop: number,
  viewport: number,
  overscan: number,
): { start: number; end: number } {
  return visibleRange(offsets, scrollTop, viewport, overscan);
}

/** A group's rows to build, [from, to), and the height of the rows left out above and below. */
export interface RowSlice {
  from: number;
  to: number;
  before: number;
  after: number;
}

/** The slice of a group's `count` rows (first slot `first`) inside the slot range. */
export function rowSlice(first: number, count: number, offsets: ArrayLike<number>, range: { start: number; end: number }): RowSlice {
  const clamp = (v: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, v));
  const from = clamp(range.start - first, 0, count);
  const to = clamp(range.end - first, from, count);
  return {
    from,
    to,
    before: offsets[first + from] - offsets[first],
    after: offsets[first + count] - offsets[first + to],
  };
}

/**
 * Keys for a windowed list's rows that let a row built for one session show another: a session
 * still listed keeps its key; a session that went frees its key, which a session coming in
 * takes. A keystroke that swaps the rows in view then updates the rows it has instead of
 * destroying them all and building new ones (the same for a scroll: the row leaving at one end
 * becomes the one coming in at the other).
 */
export class RowKeys {
  private readonly keyOf = new Map<string, number>();
  private next = 0;

  /** The key of each id, in order (ids are distinct). */
  assign(ids: readonly string[]): number[] {
    const wanted = new Set(ids);
    const free: number[] = [];
    for (const [id, key] of this.keyOf) {
      if (!wanted.has(id)) {
        free.push(key);
        this.keyOf.delete(id);
      }
    }
    free.sort((a, b) => a - b);
    let f = 0;
    return ids.map((id) => {
      let key = this.keyOf.get(id);
      if (key === undefined) {
        key = f < free.length ? free[f++] : this.next++;
        this.keyOf.set(id, key);
      }
      return key;
    });
  }
}

/** What the measurements of one frame change, once they are applied. */
export interface LaterMeasurements {
  /** The list's new height (shorter than the one shown), or null. */
  viewport: number | null;
  /** The height guess for rows not measured changed (it moves every row not built). */
  guess: boolean;
  /** Some rows measured other than the layout assumed (only without a new guess). */
  moved: boolean;
}

/**
 * Holds what the sidebar's measurements change until the task after the frame they came in.
 * Measurements arrive inside a frame, after its layout; the built rows already sit where their
 * heights put them (they are in the page's flow), so a row's new height only moves the rows not
 * built (their spacers) and which rows to build, and a list that got shorter only leaves some rows
 * built out of view. Applied inside the frame, each laid the sidebar out a second time before its
 * paint (on the first paint, the list's real height; on a new item, a row that grew). A list that
 * got taller is filled at once (it would show empty space).
 */
export class MeasureLater {
  private pending: LaterMeasurements = { viewport: null, guess: false, moved: false };
  private queued = false;

  /** `apply` gets what waited; `later` runs it in a task of its own (a timer by default). */
  constructor(
    private readonly apply: (what: LaterMeasurements) => void,
    private readonly later: (run: () => void) => void = (run) => void setTimeout(run, 0),
  ) {}

  /** The list measured `height` while `shown` is the height its rows are built for: answers
   * the height to use at once (taller), or null (shorter: it waits; the same: nothing). */
  viewport(height: number, shown: number): number | null {
    if (height < shown) {
      this.pending.viewport = height;
      this.queue();
      return null;
    }
    // Taller, or back to the height shown: a shorter one waiting would now be wrong.
    this.pending.viewport = null;
    return height > shown ? height : null;
  }

  /** Rows were measured: the guess changed, or rows moved. */
  rows(what: 'guess' | 'moved'): void {
    this.pending[what] = true;
    this.queue();
  }

  private queue(): void {
    if (this.queued) return;
    this.queued = true;
    this.later(() => {
      this.queued = false;
      const what = this.pending;
      this.pending = { viewport: null, guess: false, moved: false };
      if (what.viewport !== null || what.guess || what.moved) this.apply(what);
    });
  }
}
