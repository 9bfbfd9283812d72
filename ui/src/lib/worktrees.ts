// Pure helpers for worktrees: a name from a title, and the sidebar's groups ordered under their
// repository (its main checkout first, then each worktree).

import type { Workplace } from '$lib/types/Workplace';
import type { RowGroup } from './sidebarTree';

/** A worktree name from a title: lower-case words joined by `-` (the backend checks it too). */
export function suggestWorktreeName(title: string): string {
  const name = title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return name || 'work';
}

/** A sidebar group with where it works. */
export interface PlacedGroup<G extends { directory: string } = RowGroup> {
  group: G;
  place: Workplace | undefined;
  /** The repository heading to show above this group (the first group of a repository). */
  heading: string | null;
}

/** The groups with those of one repository together: the main checkout first, then its
 * worktrees; repositories keep the order of their newest group. */
export function orderByRepository<G extends { directory: string }>(
  groups: readonly G[],
  places: Map<string, Workplace>,
): PlacedGroup<G>[] {
  const byRepo = new Map<string, PlacedGroup<G>[]>();
  const order: string[] = [];
  for (const group of groups) {
    const place = places.get(group.directory);
    const repo = place?.repository ?? `dir:${group.directory}`;
    let list = byRepo.get(repo);
    if (!list) {
      list = [];
      byRepo.set(repo, list);
      order.push(repo);
    }
    list.push({ group, place, heading: null });
  }
  const out: PlacedGroup<G>[] = [];
  for (const repo of order) {
    const list = byRepo.get(repo) ?? [];
    list.sort((a, b) => Number(!!a.place?.worktree) - Number(!!b.place?.worktree));
    const grouped = !repo.startsWith('dir:') && list.some((g) => g.place?.worktree);
    if (grouped && list[0]) list[0].heading = repo;
    out.push(...list);
  }
  return out;
}
