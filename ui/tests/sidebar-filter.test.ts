// The sidebar's filter as the user types: the search index (lowercased titles made once per
// tree) finds what a plain title search finds, and a keystroke that changes nothing on screen
// gives back the same objects, so the list has nothing to redo.
import { describe, expect, it } from 'vitest';
import { buildTree, captureOrder, filterTree, holdOrder, sessionTree, type RowGroup } from '$lib/sidebarTree';
import type { SessionView } from '$lib/types/SessionView';

function session(id: string, updated: number, title: string, extra: Partial<SessionView> = {}): SessionView {
  return { id, slug: id, projectID: 'p', directory: '/w/app', title, time: { created: 1, updated }, ...extra } as SessionView;
}

const ids = (groups: RowGroup[]) => groups.flatMap((g) => g.rows.map((r) => `${'>'.repeat(r.depth)}${r.session.id}`));

/** What the filter must show, written plainly: a top-level row shows when it or one of its
 * reviews has the query in its title (any case) or is a search hit, a review under it shows with
 * it; groups with nothing to show go, the others ordered by their most active shown block. */
function expected(groups: RowGroup[], query: string, hits: ReadonlySet<string> = new Set()): string[] {
  const q = query.trim().toLowerCase();
  const shown: { rows: string[]; lead: number; leadId: string }[] = [];
  for (const g of groups) {
    const rows: string[] = [];
    let lead = -1;
    let leadId = '';
    for (let i = 0; i < g.rows.length; ) {
      let j = i + 1;
      while (j < g.rows.length && g.rows[j].depth > 0) j++;
      const block = g.rows.slice(i, j);
      if (!q || block.some((r) => (r.session.title ?? '').toLowerCase().includes(q) || hits.has(r.session.id))) {
        rows.push(...block.map((r) => `${'>'.repeat(r.depth)}${r.session.id}`));
        if (lead < 0) {
          lead = Math.max(...block.map((r) => r.session.time.updated));
          leadId = block[0].session.id;
        }
      }
      i = j;
    }
    if (rows.length) shown.push({ rows, lead, leadId });
  }
  shown.sort((a, b) => b.lead - a.lead || (a.leadId < b.leadId ? 1 : -1));
  return shown.flatMap((g) => g.rows);
}

// Three folders, pairs whose review alone matches, mixed case, an empty title, an archived one.
const all: SessionView[] = [];
for (let i = 0; i < 60; i++) {
  const dir = `/w/${['app', 'api', 'docs'][i % 3]}`;
  all.push(session(`s${i}`, 1000 + i, i % 7 === 0 ? '' : `Fix Parser bug ${i}`, { directory: dir }));
}
all.push(
  session('impl', 5000, 'Refactor store', { link: { kind: 'original', otherSessionId: 'rev', otherExists: true } }),
  session('rev', 5001, 'Review: LEXER', { link: { kind: 'review', otherSessionId: 'impl', otherExists: true } }),
  session('old', 6000, 'Parser archived', { time: { created: 1, updated: 6000, archived: 6001 } } as Partial<SessionView>),
);

describe('sidebar filter', () => {
  const tree = buildTree(all);
  const unfiltered = filterTree(tree);

  it.each(['', 'parser', 'PARSER', 'bug 1', 'lexer', 'review: l', ' store ', 'zzz', 'fix parser bug 59', 'r'])(
    'shows what a plain title search shows for %j',
    (query) => {
      expect(ids(filterTree(tree, query))).toEqual(expected(unfiltered, query));
    },
  );

  it('shows a pair when only its review matches, under its implementer, and hides what does not match', () => {
    expect(ids(filterTree(tree, 'lexer'))).toEqual(['impl', '>rev']);
    const bug1 = ids(filterTree(tree, 'bug 1'));
    expect(bug1).toContain('s10');
    expect(bug1).not.toContain('s2');
    expect(bug1).not.toContain('s0'); // an empty title matches nothing but the empty query
    expect(ids(filterTree(tree, 'parser archived'))).toEqual([]); // archived is not listed
  });

  it('adds the search hits beyond titles', () => {
    const hits = new Set(['s0', 'rev']);
    expect(ids(filterTree(tree, 'nothing like it', hits))).toEqual(expected(unfiltered, 'nothing like it', hits));
    expect(ids(filterTree(tree, 'nothing like it', hits))).toEqual(['impl', '>rev', 's0']);
  });

  it('matches sessionTree (build then filter), the way the list used it before', () => {
    expect(ids(sessionTree(all, { query: 'Parser' }))).toEqual(ids(filterTree(tree, 'parser')));
  });

  it('gives back the previous answer when a keystroke changes no row, and keeps unchanged groups', () => {
    const p = filterTree(tree, 'p');
    // Every listed title but the empty ones has a "p": typing on keeps the same rows.
    const pa = filterTree(tree, 'pa', undefined, p);
    expect(pa).toBe(p);
    // Narrowing changes some groups: the ones left as they were are the same objects.
    const narrowed = filterTree(tree, 'bug 5', undefined, pa);
    expect(narrowed).not.toBe(pa);
    expect(ids(narrowed)).toEqual(expected(unfiltered, 'bug 5'));
    for (const group of narrowed) {
      const before = pa.find((g) => g.key === group.key);
      if (before && before.rows.length === group.rows.length) expect(group).toBe(before);
      else expect(group).not.toBe(before);
    }
  });

  it('does not keep a group whose rows changed, even with the same count', () => {
    const a = filterTree(tree, 'bug 10');
    const b = filterTree(tree, 'bug 11', undefined, a);
    expect(a.map((g) => g.rows.length)).toEqual(b.map((g) => g.rows.length));
    expect(ids(b)).toEqual(expected(unfiltered, 'bug 11'));
    expect(b[0]).not.toBe(a[0]);
  });

  it('holds the order without remaking what is already in it', () => {
    const shown = filterTree(tree);
    const held = captureOrder(shown);
    const calm = holdOrder(shown, held, Infinity);
    expect(calm.groups).toEqual(shown);
    calm.groups.forEach((g, i) => expect(g).toBe(shown[i]));
    const narrowed = filterTree(tree, 'parser', undefined, shown);
    const again = holdOrder(narrowed, held, Infinity, calm);
    expect(ids(again.groups)).toEqual(ids(holdOrder(narrowed, held, Infinity).groups));
    // Nothing changed since: the same answer.
    expect(holdOrder(narrowed, held, Infinity, again)).toBe(again);
  });
});

describe('held order answers', () => {
  it('answers the same inputs with the same answer, and new inputs anew', () => {
    const tree = buildTree([session('a', 2, 'A'), session('b', 1, 'B')]);
    const shown = filterTree(tree);
    const held = captureOrder(shown);
    const first = holdOrder(shown, held, 5);
    expect(holdOrder(shown, held, 5, first)).toBe(first);
    // Another moment held: rows updated after it are marked.
    const later = holdOrder(shown, held, 1, first);
    expect(later).not.toBe(first);
    expect([...later.moved]).toEqual(['a']);
    // Released: the fresh order.
    expect(holdOrder(shown, null, Infinity, later).moved.size).toBe(0);
  });
});

describe('search hits as the filter input', () => {
  it('keeps the same set while a search finds no new session, a new one when it does', async () => {
    const { sameIdsAs } = await import('$lib/sidebarTree');
    const a = sameIdsAs(new Set(['x']), undefined);
    expect(sameIdsAs(new Set(['x']), a)).toBe(a);
    const b = sameIdsAs(new Set(['x', 'y']), a);
    expect(b).not.toBe(a);
    expect([...b]).toEqual(['x', 'y']);
    expect(sameIdsAs(new Set(['y']), b)).not.toBe(b);
  });
});
