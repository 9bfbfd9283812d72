// The worktree entries of a session's menu: merge back (a session in a worktree), move to a new
// worktree (a session in a repository's main checkout).

import { t } from '$lib/i18n/index.svelte';
import { worktrees } from '$lib/state/worktrees.svelte';
import type { Session } from '$lib/types/Session';
import type { MenuItem } from '../common/Menu.svelte';

/** Menu entries for where the session works. */
export function worktreeMenuItems(session: Session): MenuItem[] {
  const place = worktrees.places.get(session.directory);
  if (!place || place.gone || place.remote || !place.repository) return [];
  if (place.worktree) {
    return [{ label: t('worktree.mergeAction'), icon: 'fork', action: () => (worktrees.mergeSessionId = session.id) }];
  }
  return [{ label: t('worktree.moveAction'), icon: 'fork', action: () => (worktrees.moveSessionId = session.id) }];
}
