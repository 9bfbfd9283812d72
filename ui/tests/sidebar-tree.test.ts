import { describe, expect, it } from 'vitest';
import { captureOrder, holdOrder, sessionTree, type RowGroup } from '$lib/sidebarTree';
import type { SessionView } from '$lib/types/SessionView';

function session(id: string, updated: number, extra: Partial<SessionView> = {}): SessionView {
  return {
    id,
    slug: id,
    projectID: 'p',
    directory: '/w/app',
    title: `T ${id}`,
    time: { created: 1, updated },
    ...extra,
  } as SessionView;
}

function pair(impl: string, review: string, implAt: number, reviewAt: number, dir = '/w/app'): SessionView[] {
  return [
    session(impl, implAt, { directory: dir, link: { kind: 'original', otherSessionId: review, otherExists: true } }),
    session(review, reviewAt, { directory: dir, link: { kind: 'review', otherSessionId: impl, otherExists: true } }),
  ];
}

const ids = (groups: RowGroup[]) => groups.flatMap((g) => g.rows.map((r) => `${'>'.repeat(r.depth)}${r.session.id}`));

describe('sidebar tree', () => {
  it('puts each review session right under its implementer, not between implementers', () => {
    const all = [...pair('a', 'ra', 10, 50), ...pair('b', 'rb', 30, 31), session('solo', 40)];
    // The pair a/ra is as active as its newest side (ra at 50): it leads.
    expect(ids(sessionTree(all))).toEqual(['a', '>ra', 'solo', 'b', '>rb']);
  });

  it('keeps a review whose implementer is gone (or elsewhere) as a top-level row', () => {
    const orphan = session('r', 5, { link: { kind: 'review', otherSessionId: 'gone', otherExists: false } });
    const [impl, rev] = pair('i', 'ri', 3, 4);
    const elsewhere = { ...rev, directory: '/w/other' };
    const groups = sessionTree([orphan, impl, elsewhere]);
    expect(ids(groups).sort()).toEqual(['i', 'r', 'ri']);
    expect(groups.flatMap((g) => g.rows).every((r) => r.depth === 0)).toBe(true);
    expect(groups.map((g) => g.key).sort()).toEqual(['/w/app', '/w/other']);
  });

  it('shows a pair when either side matches the query, and search hits beyond titles', () => {
    const all = [...pair('a', 'ra', 10, 20), session('x', 5, { title: 'other' })];
    all[1] = { ...all[1], title: 'Review: parser' };
    expect(ids(sessionTree(all, { query: 'parser' }))).toEqual(['a', '>ra']);
    expect(ids(sessionTree(all, { query: 'nothing', alsoShow: new Set(['x']) }))).toEqual(['x']);
  });

  it('takes a grouping from the caller (a server or worktree level slots in)', () => {
    const all = [session('a', 1), session('b', 2, { directory: '/w/b' })];
    const groups = sessionTree(all, { groupOf: () => ({ key: 'srv', directory: '', name: 'Server' }) });
    expect(groups.map((g) => g.key)).toEqual(['srv']);
    expect(ids(groups)).toEqual(['b', 'a']);
  });
});

describe('calm order', () => {
  it('holds rows in place while held, marks the ones with new activity, and settles when released', () => {
    const before = [...pair('a', 'ra', 30, 31), session('b', 20), session('c', 10)];
    const shown = sessionTree(before);
    const held = captureOrder(shown);
    // c finishes a turn: fresh order puts it first.
    const after = before.map((s) => (s.id === 'c' ? { ...s, time: { ...s.time, updated: 100 } } : s));
    const fresh = sessionTree(after);
    expect(ids(fresh)).toEqual(['c', 'a', '>ra', 'b']);
    const calm = holdOrder(fresh, held, 50);
    expect(ids(calm.groups)).toEqual(['a', '>ra', 'b', 'c']);
    expect(calm.moved.has('c')).toBe(true);
    expect(calm.moved.has('b')).toBe(false);
    // Released: the fresh order, nothing marked.
    const settled = holdOrder(fresh, null);
    expect(ids(settled.groups)).toEqual(['c', 'a', '>ra', 'b']);
    expect(settled.moved.size).toBe(0);
  });

  it('puts new rows after the held ones and keeps a review with its implementer', () => {
    const held = captureOrder(sessionTree([session('a', 2), session('b', 1)]));
    const fresh = sessionTree([session('a', 2), session('b', 1), ...pair('n', 'rn', 9, 9)]);
    expect(ids(holdOrder(fresh, held).groups)).toEqual(['a', 'b', 'n', '>rn']);
  });

  it('holds the order of groups too', () => {
    const a = session('a', 2, { directory: '/w/one' });
    const b = session('b', 1, { directory: '/w/two' });
    const held = captureOrder(sessionTree([a, b]));
    const fresh = sessionTree([a, { ...b, time: { ...b.time, updated: 9 } }]);
    expect(fresh.map((g) => g.key)).toEqual(['/w/two', '/w/one']);
    expect(holdOrder(fresh, held).groups.map((g) => g.key)).toEqual(['/w/one', '/w/two']);
  });
});

describe('row details', () => {
  it('picks an icon per provider family, a chip for the rest', async () => {
    const { providerIcon } = await import('$lib/sidebarTree');
    expect(providerIcon('anthropic')).toBe('provider-anthropic');
    expect(providerIcon('openai')).toBe('provider-openai');
    expect(providerIcon('google-vertex')).toBe('provider-google');
    expect(providerIcon('scripted')).toBe('provider-other');
    expect(providerIcon(undefined)).toBe('provider-other');
  });

  it('shows the last non-empty line of a reply, cut when long', async () => {
    const { lastLine } = await import('$lib/sidebarTree');
    expect(lastLine('first\nDone: tests pass.\n\n')).toBe('Done: tests pass.');
    expect(lastLine('x'.repeat(300), 10)).toBe(`${'x'.repeat(9)}…`);
    expect(lastLine('  \n ')).toBe('');
  });
});
