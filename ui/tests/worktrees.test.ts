import { describe, expect, it } from 'vitest';
import type { RowGroup } from '../src/lib/sidebarTree';
import type { Workplace } from '../src/lib/types/Workplace';
import { orderByRepository, suggestWorktreeName } from '../src/lib/worktrees';

const group = (directory: string): RowGroup => ({ key: directory, directory, name: directory.split('/').pop() ?? '', rows: [] });
const place = (directory: string, repository: string | undefined, worktree: boolean): Workplace => ({
  directory,
  ...(repository ? { repository } : {}),
  worktree,
  gone: false,
  remote: false,
});

describe('worktrees', () => {
  it('suggests a name from a title', () => {
    expect(suggestWorktreeName('Fix the login form!')).toBe('fix-the-login-form');
    expect(suggestWorktreeName('***')).toBe('work');
  });

  it("puts a repository's worktrees after its main checkout under one heading", () => {
    const groups = [group('/wt/a'), group('/other'), group('/repo'), group('/wt/b')];
    const places = new Map([
      ['/wt/a', place('/wt/a', '/repo', true)],
      ['/wt/b', place('/wt/b', '/repo', true)],
      ['/repo', place('/repo', '/repo', false)],
      ['/other', place('/other', undefined, false)],
    ]);
    const placed = orderByRepository(groups, places);
    expect(placed.map((p) => p.group.directory)).toEqual(['/repo', '/wt/a', '/wt/b', '/other']);
    expect(placed.map((p) => p.heading)).toEqual(['/repo', null, null, null]);
  });

  it('gives a repository without worktrees no heading', () => {
    const placed = orderByRepository([group('/repo')], new Map([['/repo', place('/repo', '/repo', false)]]));
    expect(placed[0].heading).toBeNull();
  });
});
