import { describe, expect, it } from 'vitest';
import { buildTree, filterTree, type RowGroup } from '$lib/sidebarTree';
import { heightsMoved, MeasureLater, rowSlice, shiftAbove, slotsShift, SLOT_HEIGHT, sidebarSlots, slotOffsets, slotRange, RowKeys, TypicalHeight, type LaterMeasurements, type SidebarPart } from '$lib/sidebarWindow';
import type { SessionView } from '$lib/types/SessionView';

function session(id: string, updated: number, extra: Partial<SessionView> = {}): SessionView {
  return { id, slug: id, projectID: 'p', directory: '/w/app', title: `T ${id}`, time: { created: 1, updated }, ...extra } as SessionView;
}

function group(key: string, ids: string[]): RowGroup {
  return { key, directory: key, name: key, rows: ids.map((id, i) => ({ session: session(id, i), depth: 0 })) };
}

const placed = (...groups: RowGroup[]) => groups.map((g) => ({ group: g, place: undefined, heading: null }));
const rows = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('sidebar window', () => {
  it('lays out server headers, group heads and rows top to bottom; a collapsed group keeps its head only', () => {
    const parts: SidebarPart[] = [
      { server: 'a', placed: placed(group('a:/x', ['1', '2'])) },
      { server: 'b', placed: [{ group: group('b:/y', ['3']), place: undefined, heading: 'repo' }, ...placed(group('b:/z', ['4']))] },
    ];
    const slots = sidebarSlots(parts, (key) => key === 'b:/z');
    expect(slots.kinds).toEqual(['server', 'group', 'row', 'row', 'server', 'heading', 'group', 'row', 'group']);
    expect(slots.firstRow.get('a:/x')).toBe(2);
    expect(slots.rowAt.get('3')).toBe(7);
    expect(slots.rowAt.has('4')).toBe(false);
  });

  it('builds only the rows that meet the view, the rest kept as spacers of their height', () => {
    const slots = sidebarSlots([{ server: null, placed: placed(group('/x', rows(300, 's'))) }], () => false);
    const offsets = slotOffsets(slots, new Map());
    // Scrolled to row 100, a view of 10 rows, no overscan.
    const top = SLOT_HEIGHT.group + 100 * SLOT_HEIGHT.row;
    const range = slotRange(offsets, top, 10 * SLOT_HEIGHT.row, 0);
    const slice = rowSlice(slots.firstRow.get('/x') ?? -1, 300, offsets, range);
    expect([slice.from, slice.to]).toEqual([100, 110]);
    expect(slice.before).toBe(100 * SLOT_HEIGHT.row);
    expect(slice.after).toBe(190 * SLOT_HEIGHT.row);
    // Spacers and built rows add up to the whole group.
    expect(slice.before + (slice.to - slice.from) * SLOT_HEIGHT.row + slice.after).toBe(300 * SLOT_HEIGHT.row);
  });

  it('uses measured heights where it has them', () => {
    const slots = sidebarSlots([{ server: null, placed: placed(group('/x', ['a', 'b', 'c'])) }], () => false);
    const offsets = slotOffsets(slots, new Map([['a', 70]]));
    expect(Array.from(offsets)).toEqual([0, SLOT_HEIGHT.group, SLOT_HEIGHT.group + 70, SLOT_HEIGHT.group + 70 + SLOT_HEIGHT.row, SLOT_HEIGHT.group + 70 + 2 * SLOT_HEIGHT.row]);
  });

  it('builds nothing of a group below the view, and everything of a short list', () => {
    const parts: SidebarPart[] = [
      { server: 'a', placed: placed(group('a:/x', rows(100, 'a'))) },
      { server: 'b', placed: placed(group('b:/y', rows(100, 'b'))) },
    ];
    const slots = sidebarSlots(parts, () => false);
    const offsets = slotOffsets(slots, new Map());
    const range = slotRange(offsets, 0, 700, 300);
    const second = rowSlice(slots.firstRow.get('b:/y') ?? -1, 100, offsets, range);
    expect(second.to - second.from).toBe(0);
    expect(second.before + second.after).toBe(100 * SLOT_HEIGHT.row);
    const short = sidebarSlots([{ server: null, placed: placed(group('/x', rows(5, 's'))) }], () => false);
    const shortOffsets = slotOffsets(short, new Map());
    expect(rowSlice(1, 5, shortOffsets, slotRange(shortOffsets, 0, 700, 300))).toEqual({ from: 0, to: 5, before: 0, after: 0 });
  });
});

describe('tree then filter', () => {
  it('filters the built tree without rebuilding it, as the one-step tree did', () => {
    const all = [
      session('a', 10, { title: 'Parser work' }),
      session('b', 30, { title: 'Lexer', directory: '/w/other' }),
      session('c', 20, { title: 'parser tests', directory: '/w/other' }),
    ];
    const tree = buildTree(all);
    const keys = (groups: RowGroup[]) => groups.map((g) => `${g.key}:${g.rows.map((r) => r.session.id).join(',')}`);
    expect(keys(filterTree(tree))).toEqual(['/w/other:b,c', '/w/app:a']);
    // Case-insensitive; a group is ordered by its newest row shown.
    expect(keys(filterTree(tree, 'PARSER'))).toEqual(['/w/other:c', '/w/app:a']);
    expect(keys(filterTree(tree, 'lexer'))).toEqual(['/w/other:b']);
    expect(keys(filterTree(tree, 'nothing', new Set(['a'])))).toEqual(['/w/app:a']);
    // A renamed session is a new object: its new title is matched.
    const renamed = buildTree([{ ...all[0], title: 'Lexer too' }, all[1], all[2]]);
    expect(keys(filterTree(renamed, 'lexer'))).toEqual(['/w/other:b', '/w/app:a']);
  });

  it('orders groups whose shown rows are equally new by the rows themselves', () => {
    const tree = buildTree([session('a', 5), session('b', 5, { directory: '/w/b' }), session('c', 9, { directory: '/w/b', title: 'zz' })]);
    // Without the query /w/b leads (c at 9); with it both groups show a row at 5: b (the larger id) first.
    expect(filterTree(tree, 'T ').map((g) => g.key)).toEqual(['/w/b', '/w/app']);
  });
});

describe('row heights', () => {
  it('guesses unmeasured rows as tall as most measured rows', () => {
    const typical = new TypicalHeight(46);
    expect(typical.add(47.5, undefined)).toBe(true);
    expect(typical.value).toBe(47.5);
    expect(typical.add(47.5, undefined)).toBe(false);
    // One taller row (a second line) does not move the guess; a tie keeps it.
    expect(typical.add(64, undefined)).toBe(false);
    expect(typical.add(47.5, undefined)).toBe(false);
    expect(typical.add(64, 47.5)).toBe(false);
    expect(typical.value).toBe(47.5);
    // Most rows grew: the guess follows.
    expect(typical.add(64, 47.5)).toBe(true);
    expect(typical.value).toBe(64);
    // The guess is what unmeasured rows get in the layout.
    const slots = sidebarSlots([{ server: null, placed: placed(group('/x', rows(3, 's'))) }], () => false);
    expect(Array.from(slotOffsets(slots, new Map([['s0', 50]]), typical.value))).toEqual([0, 32, 82, 146, 210]);
  });

  it('tells whether measured rows move anything: a row measuring what was assumed does not', () => {
    const measured = new Map([['a', 47.5], ['b', 60]]);
    expect(heightsMoved(['a'], [undefined], measured, 47.5)).toBe(false);
    expect(heightsMoved(['a'], [undefined], measured, 46)).toBe(true);
    expect(heightsMoved(['b'], [47.5], measured, 47.5)).toBe(true);
    expect(heightsMoved(['a', 'b'], [undefined, 60], measured, 47.5)).toBe(false);
  });
});

describe('row keys', () => {
  it('keeps a listed session on its key and gives the keys of the ones that went to the ones that came', () => {
    const keys = new RowKeys();
    expect(keys.assign(['a', 'b', 'c'])).toEqual([0, 1, 2]);
    // Scrolled by one: a goes, d comes and takes its key; b and c keep theirs.
    expect(keys.assign(['b', 'c', 'd'])).toEqual([1, 2, 0]);
    // A filter swaps every row: the same three keys, nothing new built.
    expect(keys.assign(['x', 'y', 'z'])).toEqual([0, 1, 2]);
    // More rows than before: z's key goes to w, a new key for v; the same ids again, the same keys.
    expect(keys.assign(['y', 'w', 'x', 'v'])).toEqual([1, 2, 0, 3]);
    expect(keys.assign(['y', 'w', 'x', 'v'])).toEqual([1, 2, 0, 3]);
  });
});

describe('measurements applied after the frame', () => {
  /** A MeasureLater whose "later" runs when `run()` is called, and what it applied. */
  function setup() {
    const applied: LaterMeasurements[] = [];
    let tasks: (() => void)[] = [];
    const later = new MeasureLater((what) => applied.push({ ...what }), (run) => tasks.push(run));
    const run = () => {
      const now = tasks;
      tasks = [];
      for (const t of now) t();
    };
    return { later, applied, run, queued: () => tasks.length };
  }

  it('fills a taller list at once and trims a shorter one after the frame', () => {
    const { later, applied, run } = setup();
    expect(later.viewport(900, 800)).toBe(900);
    expect(later.viewport(800, 800)).toBeNull();
    expect(applied).toEqual([]);
    expect(later.viewport(600, 800)).toBeNull();
    expect(applied).toEqual([]);
    run();
    expect(applied).toEqual([{ viewport: 600, guess: false, moved: false }]);
  });

  it('drops a shorter height waiting when the list is measured back at the height shown, or taller', () => {
    const { later, applied, run } = setup();
    later.viewport(600, 800);
    expect(later.viewport(800, 800)).toBeNull();
    run();
    expect(applied).toEqual([]);
    later.viewport(600, 800);
    expect(later.viewport(1000, 800)).toBe(1000);
    run();
    expect(applied).toEqual([]);
  });

  it('gathers one frame of measurements into one task, and keeps the last height', () => {
    const { later, applied, run, queued } = setup();
    later.rows('moved');
    later.viewport(700, 800);
    later.rows('guess');
    later.viewport(650, 800);
    expect(queued()).toBe(1);
    run();
    expect(applied).toEqual([{ viewport: 650, guess: true, moved: true }]);
    later.rows('moved');
    run();
    expect(applied[1]).toEqual({ viewport: null, guess: false, moved: true });
  });
});

describe('shiftAbove', () => {
  // The view's top edge at 100 px; rows given by their top now, their height before and now.
  it('adds up what rows wholly above the view changed, and nothing for rows in or below it', () => {
    expect(shiftAbove([{ top: 20, before: 46, height: 64 }], 100)).toBe(18);
    // A row ending exactly at the view's edge was above it.
    expect(shiftAbove([{ top: 54, before: 46, height: 64 }], 100)).toBe(18);
    // A row across the edge, or in view: the rows in view did not move past it.
    expect(shiftAbove([{ top: 60, before: 46, height: 64 }], 100)).toBe(0);
    expect(shiftAbove([{ top: 150, before: 46, height: 90 }], 100)).toBe(0);
    // Shorter than guessed: the rows in view moved up.
    expect(shiftAbove([{ top: 0, before: 46, height: 40 }], 100)).toBe(-6);
  });

  it('judges each row where it was before the rows above it changed, in any order', () => {
    // The upper row grew by 30 and pushed the lower one (now at 70) across the edge: before, the
    // lower one sat at 40 and ended at 86, above the view.
    const changes = [
      { top: 70, before: 46, height: 56 },
      { top: 0, before: 10, height: 40 },
    ];
    expect(shiftAbove(changes, 100)).toBe(40);
    expect(shiftAbove([], 100)).toBe(0);
  });
});

describe('slotsShift', () => {
  const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `s${i + from}`);
  const lay = (rowIds: string[]) => sidebarSlots([{ server: null, placed: placed(group('/x', rowIds)) }], () => false);
  const none = new Map<string, number>();
  // Rows of 46 px under a 32 px group head; the view 460 px tall, scrolled to 1000 px.
  const shiftFor = (before: string[], after: string[]) => {
    const a = lay(before);
    const b = lay(after);
    return slotsShift(a, b, slotOffsets(a, none), slotOffsets(b, none), 1000, 460);
  };

  it('is the height of a session put in above the view, or taken out of it', () => {
    const rows = ids(60);
    expect(shiftFor(rows, ['new', ...rows])).toBe(46);
    expect(shiftFor(rows, ['new', 'newer', ...rows])).toBe(92);
    expect(shiftFor(rows, rows.filter((id) => id !== 's3'))).toBe(-46);
  });

  it('is nothing for a change below the view, or for the same rows', () => {
    const rows = ids(60);
    expect(shiftFor(rows, [...rows, 'new'])).toBe(0);
    expect(shiftFor(rows, rows.filter((id) => id !== 's55'))).toBe(0);
    expect(shiftFor(rows, [...rows])).toBe(0);
  });

  it('does not follow a row in view that itself moved to the top', () => {
    const rows = ids(60);
    // Rows s21-s31 meet the view. s22 moves to the top: s21 moves down one row, s22 goes far
    // up, s23-s31 stay; the median holds the ones that stayed.
    expect(shiftFor(rows, ['s22', ...rows.filter((id) => id !== 's22')])).toBe(0);
  });

  it('is nothing when no row in view is left', () => {
    expect(shiftFor(ids(60), ids(60, 100))).toBe(0);
  });
});
