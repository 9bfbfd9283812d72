// Where each session works (repository, branch, worktree, gone), read by the backend with git,
// and which worktree dialog is open. Refreshed when the set of session folders changes.

import { SvelteMap } from 'svelte/reactivity';
import type { Workplace } from '$lib/types/Workplace';

class WorktreeState {
  /** Workplace of each session folder the backend described. */
  places = new SvelteMap<string, Workplace>();
  /** The session whose merge-back dialog is open. */
  mergeSessionId: string | null = $state(null);
  /** The session whose "move to a new worktree" dialog is open. */
  moveSessionId: string | null = $state(null);
  /** New worktrees whose start scripts ended, by name: `null` ready, else the server's words. */
  settled = new SvelteMap<string, string | null>();
  /** How many start-script failures arrived (the server's `worktree.failed` names no worktree). */
  failures = $state(0);
  /** The server's words on the newest failure. */
  lastFailure = $state('');
  /** A worktree folder whose removal is being offered. */
  removeDirectory: string | null = $state(null);

  /** Records a `worktree` change: ready or failed, by name when the server sent one. */
  settle(name: string, failure: string | null): void {
    if (failure !== null) {
      this.failures += 1;
      this.lastFailure = failure;
    }
    if (name) this.settled.set(name, failure);
  }
}

/** The one worktree state of the page. */
export const worktrees = new WorktreeState();
