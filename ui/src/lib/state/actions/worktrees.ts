// Worktree actions: describing session folders, making a worktree (for a new session or a
// started one), making a folder a repository, the merge preview and merge, removal.

import { invoke } from '$lib/host';
import type { CreatedWorktree } from '$lib/types/CreatedWorktree';
import type { MergeMode } from '$lib/types/MergeMode';
import type { MergeOutcome } from '$lib/types/MergeOutcome';
import type { MergePreview } from '$lib/types/MergePreview';
import type { ServerId } from '$lib/types/ServerId';
import type { Session } from '$lib/types/Session';
import { store } from '../store.svelte';
import { worktrees } from '../worktrees.svelte';
import { call } from './call';

let asked = '';

/** Describes every session folder not described yet (call when sessions change). */
export async function refreshPlaces(directories: string[], force = false): Promise<void> {
  const wanted = [...new Set(directories)].filter((d) => d && (force || !worktrees.places.has(d))).sort();
  const key = wanted.join('\n');
  if (wanted.length === 0 || (!force && key === asked)) return;
  asked = key;
  try {
    const places = await invoke({ cmd: 'workplaces', directories: wanted });
    for (const place of places) worktrees.places.set(place.directory, place);
  } catch {
    asked = '';
  }
}

/** Describes every session folder again (after a merge, a removal, a move). */
export function refreshAllPlaces(): Promise<void> {
  return refreshPlaces(
    [...store.sessions.values()].map((s) => s.directory),
    true,
  );
}

/** A new worktree of the folder's repository. Failures are thrown (the dialog shows them). */
export function createWorktree(directory: string, name: string, serverId?: ServerId): Promise<CreatedWorktree> {
  return invoke({ cmd: 'createWorktree', directory, name, serverId });
}

/** Waits until the server says the new worktree `name` is ready (`null`) or failed (its
 * words: a failure after `failuresBefore`, as `worktree.failed` names no worktree); gives up
 * waiting after `ms` and answers `null`. */
export async function worktreeSettled(name: string, failuresBefore: number, ms = 120_000): Promise<string | null> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (worktrees.settled.has(name)) return worktrees.settled.get(name) ?? null;
    if (worktrees.failures > failuresBefore) return worktrees.lastFailure;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return null;
}

/** Makes a folder a git repository. */
export function initRepository(directory: string, serverId?: ServerId): Promise<null> {
  return call({ cmd: 'initRepository', directory, serverId });
}

/** Moves a started session into a new worktree with its uncommitted changes. */
export async function moveToWorktree(sessionId: string, name: string): Promise<Session> {
  const view = await invoke({ cmd: 'moveToWorktree', sessionId, name });
  if (view?.id) store.sessions.set(view.id, view);
  await refreshAllPlaces();
  return view;
}

/** What merging a session's worktree back would bring. Failures are thrown. */
export function previewMerge(sessionId: string): Promise<MergePreview> {
  return invoke({ cmd: 'mergePreview', sessionId });
}

/** Merges a session's worktree back. Failures are thrown; a conflict is an answer. */
export async function mergeWorktree(sessionId: string, mode: MergeMode): Promise<MergeOutcome> {
  const outcome = await invoke({ cmd: 'mergeWorktree', sessionId, mode });
  await refreshAllPlaces();
  return outcome;
}

/** Removes a worktree and its branch through the server its sessions are on; `force` also
 * when it has uncommitted changes. */
export async function removeWorktree(directory: string, force: boolean): Promise<void> {
  const serverId = [...store.sessions.values()].find((s) => s.directory === directory)?.serverId;
  await invoke({ cmd: 'removeWorktree', directory, force, serverId });
  worktrees.places.delete(directory);
  await refreshAllPlaces();
}

/** After a session was deleted: offers to remove its worktree when it worked in one. */
export function offerWorktreeRemoval(session: Session | undefined): void {
  if (!session) return;
  const place = worktrees.places.get(session.directory);
  const others = [...store.sessions.values()].some((s) => s.id !== session.id && s.directory === session.directory);
  if (place?.worktree && !place.gone && !others) worktrees.removeDirectory = session.directory;
}
