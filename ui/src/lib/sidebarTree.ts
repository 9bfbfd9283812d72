// The sidebar's rows, as pure functions: which sessions show, in which group, in which order,
// with each review session right under its implementer; and the calm order, held while the
// pointer is over the list. A group is any level (today the folder; a server or worktree level
// passes its own `groupOf` and wraps these groups).

import type { SessionView } from '$lib/types/SessionView';
import { isArchived, lastSegment } from './sessions';

/** One row: a session, indented under its implementer when it is the pair's review. */
export interface SessionRow {
  session: SessionView;
  /** 0 for a top-level row, 1 for a review session under its implementer. */
  depth: number;
}

/** A group of rows (a folder today). */
export interface RowGroup {
  /** Stable key of the group (the folder). */
  key: string;
  /** Folder the group stands for. */
  directory: string;
  /** Name shown in the group's head. */
  name: string;
  rows: SessionRow[];
}

/** Where a session belongs: its group's key, folder and name. */
export type GroupOf = (session: SessionView) => { key: string; directory: string; name: string };

/** Options of [sessionTree]. */
export interface TreeOptions {
  /** Title filter (case-insensitive). */
  query?: string;
  showArchived?: boolean;
  /** The group of a session; by folder when not given. */
  groupOf?: GroupOf;
  /** Extra sessions to keep whatever the query says (transcript search hits). */
  alsoShow?: ReadonlySet<string>;
}

/** A held order: row ids per group key, as they were when the pointer came over the list. */
export type HeldOrder = ReadonlyMap<string, readonly string[]>;


/** The default grouping: one group per folder. */
export const folderGroup: GroupOf = (session) => ({
  key: session.directory,
  directory: session.directory,
  name: lastSegment(session.directory),
});

const newest = (s: SessionView) => s.time?.updated ?? 0;

/** The implementer a review session hangs under, when that session is listed too. */
function parentOf(session: SessionView, listed: ReadonlyMap<string, SessionView>): string | null {
  const link = session.link;
  if (link?.kind !== 'review' || !link.otherExists) return null;
  const other = listed.get(link.otherSessionId);
  // A review only nests under a top-level implementer of the same group (no chains).
  return other && other.link?.kind !== 'review' ? other.id : null;
}

/** A top-level session with the review sessions nested under it, and how active the pair is. */
export interface Block {
  top: SessionView;
  /** Its review sessions, newest first. */
  kids: SessionView[];
  /** The newest activity of the top or any of its kids. */
  activity: number;
  /** Its rows (the top, then its kids), made once per tree: a filter shows these same objects. */
  rows: SessionRow[];
  /** The search index: the lowercased titles of the top and its kids. */
  titles: string[];
}

/** A group of blocks, before any query: [buildTree]'s answer, which [filterTree] narrows. */
export interface BlockGroup {
  key: string;
  directory: string;
  name: string;
  /** Most active first. */
  blocks: Block[];
  /** Every block's rows, in order: the group's rows when every block shows. */
  rows: SessionRow[];
}

/** Options of [buildTree]: what does not change as the user types. */
export type BuildOptions = Pick<TreeOptions, 'showArchived' | 'groupOf'>;

/**
 * The sidebar's groups before filtering: top-level sessions only (subagents belong to their
 * parent), newest activity first (a pair counts as active as its busiest side), each review
 * session under its implementer; groups in the order of their most active block. It does not
 * depend on the query, so a keystroke only runs [filterTree].
 */
export function buildTree(sessions: Iterable<SessionView>, options: BuildOptions = {}): BlockGroup[] {
  const groupOf = options.groupOf ?? folderGroup;
  const listed = new Map<string, SessionView>();
  for (const s of sessions) {
    if (s.parentID) continue;
    if (!options.showArchived && isArchived(s)) continue;
    listed.set(s.id, s);
  }
  const children = new Map<string, SessionView[]>();
  const tops: SessionView[] = [];
  for (const s of listed.values()) {
    const parent = parentOf(s, listed);
    if (parent && groupOf(listed.get(parent) as SessionView).key === groupOf(s).key) {
      const kids = children.get(parent);
      if (kids) kids.push(s);
      else children.set(parent, [s]);
    } else {
      tops.push(s);
    }
  }
  const blocks = tops.map((top): Block => {
    const kids = (children.get(top.id) ?? []).sort((a, b) => newest(b) - newest(a));
    return {
      top,
      kids,
      activity: Math.max(newest(top), ...kids.map(newest)),
      rows: [{ session: top, depth: 0 }, ...kids.map((kid) => ({ session: kid, depth: 1 }))],
      titles: [lowerTitle(top), ...kids.map(lowerTitle)],
    };
  });
  blocks.sort((a, b) => b.activity - a.activity || (a.top.id < b.top.id ? 1 : -1));
  const groups = new Map<string, BlockGroup>();
  for (const block of blocks) {
    const where = groupOf(block.top);
    let group = groups.get(where.key);
    if (!group) {
      group = { ...where, blocks: [], rows: [] };
      groups.set(where.key, group);
    }
    group.blocks.push(block);
    for (const row of block.rows) group.rows.push(row);
  }
  return [...groups.values()];
}

/** Lowercased titles, computed once per session object (a changed session is a new object), so a
 * tree rebuilt for one session's change does not lowercase the others again. */
const lowerTitles = new WeakMap<SessionView, string>();

/** The lowercased title a query is looked for in. */
function lowerTitle(s: SessionView): string {
  let lower = lowerTitles.get(s);
  if (lower === undefined) {
    lower = (s.title || '').toLowerCase();
    lowerTitles.set(s, lower);
  }
  return lower;
}

/** True when two lists hold the same items (the same objects) in the same order. */
function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * `next` with the groups of `previous` that show the same rows kept as they were, and
 * `previous` itself when nothing changed: what did not change stays the same object, so the
 * list does not redo (or re-render) it. Rows are compared by identity ([buildTree] makes them).
 */
export function keepUnchanged(next: RowGroup[], previous: readonly RowGroup[] | undefined): RowGroup[] {
  if (!previous || previous.length === 0) return next;
  const before = new Map(previous.map((g) => [g.key, g]));
  let same = next.length === previous.length;
  const out = next.map((group, i) => {
    const old = before.get(group.key);
    const kept =
      old && old.directory === group.directory && old.name === group.name && sameItems(old.rows, group.rows) ? old : group;
    if (kept !== previous[i]) same = false;
    return kept;
  });
  return same ? (previous as RowGroup[]) : out;
}

/**
 * The rows [buildTree]'s groups show for a title query (case-insensitive; a pair shows when
 * either side matches, or is in `alsoShow`): groups with no match go, and the groups are
 * ordered by their newest shown block. Given the `previous` answer, the groups (and the whole
 * answer) that did not change are that answer's own objects (see [keepUnchanged]).
 */
export function filterTree(
  tree: readonly BlockGroup[],
  query = '',
  alsoShow?: ReadonlySet<string>,
  previous?: readonly RowGroup[],
): RowGroup[] {
  const q = query.trim().toLowerCase();
  const extra = alsoShow && alsoShow.size > 0 ? alsoShow : null;
  const shows = (block: Block): boolean => {
    if (!q) return true;
    for (const title of block.titles) if (title.includes(q)) return true;
    if (extra) {
      if (extra.has(block.top.id)) return true;
      for (const kid of block.kids) if (extra.has(kid.id)) return true;
    }
    return false;
  };
  const out: (RowGroup & { lead: Block })[] = [];
  for (const group of tree) {
    let shown: Block[] | null = null;
    let all = true;
    for (let i = 0; i < group.blocks.length; i++) {
      const block = group.blocks[i];
      if (shows(block)) {
        shown?.push(block);
      } else if (all) {
        all = false;
        shown = group.blocks.slice(0, i);
      }
    }
    const blocks = shown ?? group.blocks;
    if (blocks.length === 0) continue;
    // Every block shows (no query, or one that all match): the group's own rows.
    const rows = all ? group.rows : blocks.flatMap((b) => b.rows);
    out.push({ key: group.key, directory: group.directory, name: group.name, rows, lead: blocks[0] });
  }
  // The order of the blocks across groups: the same as the blocks' own (newest, then id).
  out.sort((a, b) => b.lead.activity - a.lead.activity || (a.lead.top.id < b.lead.top.id ? 1 : -1));
  return keepUnchanged(
    out.map(({ key, directory, name, rows }) => ({ key, directory, name, rows })),
    previous,
  );
}

/**
 * The sidebar's groups: [buildTree] then [filterTree] (the query, and `alsoShow`).
 */
export function sessionTree(sessions: Iterable<SessionView>, options: TreeOptions = {}): RowGroup[] {
  return filterTree(buildTree(sessions, options), options.query, options.alsoShow);
}

/** Captures the order on screen, to hold it. */
export function captureOrder(groups: readonly RowGroup[]): HeldOrder {
  return new Map([
    ['', groups.map((g) => g.key)],
    ...groups.map((g) => [g.key, g.rows.map((r) => r.session.id)] as [string, string[]]),
  ]);
}

/** Rows in a held order, and which rows would have moved (new activity while held). */
export interface HeldTree {
  groups: RowGroup[];
  /** Rows with new activity since the order was held (the fresh order would move them). */
  moved: Set<string>;
}

/** The rank of each key in a held order, made once per order (a keystroke reuses it). */
const rankings = new WeakMap<readonly string[], Map<string, number>>();

function ranksOf(order: readonly string[] | undefined): ReadonlyMap<string, number> | null {
  if (!order) return null;
  let ranks = rankings.get(order);
  if (!ranks) {
    ranks = new Map(order.map((key, i) => [key, i]));
    rankings.set(order, ranks);
  }
  return ranks;
}

/** `next`, or `previous` when it holds the same ids: a search's progress that found no new
 * session (most of them: it counts what it read) leaves the filter's input as it was. */
export function sameIdsAs(next: Set<string>, previous: Set<string> | undefined): Set<string> {
  return previous && sameSet(next, previous) ? previous : next;
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}

/**
 * The fresh groups in the held order: rows and groups that were on screen keep their places;
 * new ones come after them (nothing above a row the pointer is on moves down); rows that went
 * are dropped. A row updated after `heldAt` is marked `moved` (new activity). Given the
 * `previous` answer, what did not change is that answer's own objects (see [keepUnchanged]),
 * and the answer is `previous` itself when nothing changed.
 */
export function holdOrder(fresh: readonly RowGroup[], held: HeldOrder | null, heldAt = Infinity, previous?: HeldTree): HeldTree {
  const from = previous && madeFrom.get(previous);
  if (previous && from && from.fresh === fresh && from.held === held && from.heldAt === heldAt) return previous;
  const answer = holdOrderOf(fresh, held, heldAt, previous);
  madeFrom.set(answer, { fresh, held, heldAt });
  return answer;
}

/** What each [holdOrder] answer was made from: the same again gives the same answer at once. */
const madeFrom = new WeakMap<HeldTree, { fresh: readonly RowGroup[]; held: HeldOrder | null; heldAt: number }>();

function holdOrderOf(fresh: readonly RowGroup[], held: HeldOrder | null, heldAt: number, previous?: HeldTree): HeldTree {
  const moved = new Set<string>();
  let groups: RowGroup[];
  if (!held) {
    groups = [...fresh];
  } else {
    for (const group of fresh) {
      for (const row of group.rows) if ((row.session.time?.updated ?? 0) > heldAt) moved.add(row.session.id);
    }
    // Items in the held order (the ones it does not know after it); `items` itself when they
    // already are in that order (a filtered list is: it keeps the order it narrows).
    const stable = <T>(items: readonly T[], keyOf: (t: T) => string, order: readonly string[] | undefined): readonly T[] => {
      const ranks = ranksOf(order);
      const rank = (item: T) => ranks?.get(keyOf(item)) ?? Number.MAX_SAFE_INTEGER;
      let inOrder = true;
      for (let i = 1; i < items.length && inOrder; i++) inOrder = rank(items[i - 1]) <= rank(items[i]);
      if (inOrder) return items;
      return items
        .map((item, i) => ({ item, i, r: rank(item) }))
        .sort((a, b) => a.r - b.r || a.i - b.i)
        .map((x) => x.item);
    };
    groups = stable(fresh, (g) => g.key, held.get('')).map((group) => {
      const order = held.get(group.key);
      // Already in the held order (the heads of its blocks are): the group as it is.
      const ranks = ranksOf(order);
      let last = -1;
      let inOrder = true;
      for (let i = 0; i < group.rows.length && inOrder; i++) {
        const row = group.rows[i];
        if (row.depth !== 0 && i > 0) continue;
        const r = ranks?.get(row.session.id) ?? Number.MAX_SAFE_INTEGER;
        inOrder = r >= last;
        last = r;
      }
      if (inOrder) return group;
      // A review stays under its implementer: order the blocks (an implementer with its reviews).
      const blocks: SessionRow[][] = [];
      for (const row of group.rows) {
        if (row.depth === 0 || blocks.length === 0) blocks.push([row]);
        else blocks[blocks.length - 1].push(row);
      }
      const ordered = stable(blocks, (b) => b[0].session.id, order);
      return ordered === blocks ? group : { ...group, rows: ordered.flat() };
    });
  }
  if (!previous) return { groups, moved };
  const kept = keepUnchanged(groups, previous.groups);
  const keptMoved = sameSet(moved, previous.moved) ? previous.moved : moved;
  return kept === previous.groups && keptMoved === previous.moved ? previous : { groups: kept, moved: keptMoved };
}

/** The sprite symbol of a model provider (a few known families, else a generic chip). */
export function providerIcon(providerId: string | undefined): 'provider-anthropic' | 'provider-openai' | 'provider-google' | 'provider-other' {
  const id = (providerId ?? '').toLowerCase();
  if (id.includes('anthropic') || id.includes('claude')) return 'provider-anthropic';
  if (id.includes('openai') || id.includes('azure')) return 'provider-openai';
  if (id.includes('google') || id.includes('gemini') || id.includes('vertex')) return 'provider-google';
  return 'provider-other';
}

/** The last non-empty line of a reply, for a row (at most `max` characters). */
export function lastLine(text: string, max = 120): string {
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i].trim();
    if (line) return line.length > max ? `${line.slice(0, max - 1)}…` : line;
  }
  return '';
}
