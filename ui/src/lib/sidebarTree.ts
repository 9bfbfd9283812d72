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
}

/** A group of blocks, before any query: [buildTree]'s answer, which [filterTree] narrows. */
export interface BlockGroup {
  key: string;
  directory: string;
  name: string;
  /** Most active first. */
  blocks: Block[];
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
    return { top, kids, activity: Math.max(newest(top), ...kids.map(newest)) };
  });
  blocks.sort((a, b) => b.activity - a.activity || (a.top.id < b.top.id ? 1 : -1));
  const groups = new Map<string, BlockGroup>();
  for (const block of blocks) {
    const where = groupOf(block.top);
    let group = groups.get(where.key);
    if (!group) {
      group = { ...where, blocks: [] };
      groups.set(where.key, group);
    }
    group.blocks.push(block);
  }
  return [...groups.values()];
}

/** Lowercased titles, computed once per session object (a changed session is a new object). */
const lowerTitles = new WeakMap<SessionView, string>();

function lowerTitle(s: SessionView): string {
  let lower = lowerTitles.get(s);
  if (lower === undefined) {
    lower = (s.title || '').toLowerCase();
    lowerTitles.set(s, lower);
  }
  return lower;
}

/**
 * The rows [buildTree]'s groups show for a title query (case-insensitive; a pair shows when
 * either side matches, or is in `alsoShow`): groups with no match go, and the groups are
 * ordered by their newest shown block.
 */
export function filterTree(tree: readonly BlockGroup[], query = '', alsoShow?: ReadonlySet<string>): RowGroup[] {
  const q = query.trim().toLowerCase();
  const matches = (s: SessionView) => !q || lowerTitle(s).includes(q) || (alsoShow?.has(s.id) ?? false);
  const out: (RowGroup & { lead: Block })[] = [];
  for (const group of tree) {
    const rows: SessionRow[] = [];
    let lead: Block | null = null;
    for (const block of group.blocks) {
      if (!matches(block.top) && !block.kids.some(matches)) continue;
      lead ??= block;
      rows.push({ session: block.top, depth: 0 });
      for (const kid of block.kids) rows.push({ session: kid, depth: 1 });
    }
    if (lead) out.push({ key: group.key, directory: group.directory, name: group.name, rows, lead });
  }
  // The order of the blocks across groups: the same as the blocks' own (newest, then id).
  out.sort((a, b) => b.lead.activity - a.lead.activity || (a.lead.top.id < b.lead.top.id ? 1 : -1));
  return out.map(({ key, directory, name, rows }) => ({ key, directory, name, rows }));
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

/**
 * The fresh groups in the held order: rows and groups that were on screen keep their places;
 * new ones come after them (nothing above a row the pointer is on moves down); rows that went
 * are dropped. A row updated after `heldAt` is marked `moved` (new activity).
 */
export function holdOrder(fresh: readonly RowGroup[], held: HeldOrder | null, heldAt = Infinity): HeldTree {
  const moved = new Set<string>();
  if (!held) return { groups: [...fresh], moved };
  for (const group of fresh) {
    for (const row of group.rows) if ((row.session.time?.updated ?? 0) > heldAt) moved.add(row.session.id);
  }
  const stable = <T>(items: readonly T[], keyOf: (t: T) => string, order: readonly string[] | undefined) => {
    const ranks = new Map(order?.map((key, i) => [key, i]));
    return items
      .map((item, i) => ({ item, i, r: ranks.get(keyOf(item)) ?? Number.MAX_SAFE_INTEGER }))
      .sort((a, b) => a.r - b.r || a.i - b.i)
      .map((x) => x.item);
  };
  const groups = stable(fresh, (g) => g.key, held.get('')).map((group) => {
    const order = held.get(group.key);
    // A review stays under its implementer: order the blocks (an implementer with its reviews).
    const blocks: SessionRow[][] = [];
    for (const row of group.rows) {
      if (row.depth === 0 || blocks.length === 0) blocks.push([row]);
      else blocks[blocks.length - 1].push(row);
    }
    return { ...group, rows: stable(blocks, (b) => b[0].session.id, order).flat() };
  });
  return { groups, moved };
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
