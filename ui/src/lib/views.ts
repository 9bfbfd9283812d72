// The parts of the page that are not on the first screen, each its own script (see
// `lazy.svelte.ts`): the first screen is the top bar, the sidebar and an empty main view.

import { Lazy } from './lazy.svelte';

/** The chat of the selected session. */
export const chatView = new Lazy(() => import('./components/chat/ChatView.svelte'));
/** The right-hand panel (tabs of chats, reviews, changes). */
export const contextPanel = new Lazy(() => import('./components/layout/ContextPanel.svelte'));
/** Shown instead of the chat when OpenCode is missing or failed to start. */
export const serverSetup = new Lazy(() => import('./components/settings/ServerSetup.svelte'));
/** Dialogs. */
export const settingsDialog = new Lazy(() => import('./components/settings/SettingsDialog.svelte'));
export const newSessionDialog = new Lazy(() => import('./components/sessions/NewSessionDialog.svelte'));
export const handoffDialog = new Lazy(() => import('./components/review/HandoffDialog.svelte'));
export const confirmDialog = new Lazy(() => import('./components/common/ConfirmDialog.svelte'));
export const serverDialog = new Lazy(() => import('./components/settings/ServerDialog.svelte'));
export const mergeDialog = new Lazy(() => import('./components/worktrees/MergeDialog.svelte'));
export const moveDialog = new Lazy(() => import('./components/worktrees/MoveDialog.svelte'));

/** Loads the chat and the panel ahead of use (once the first screen is up), so the first
 * session opened does not wait for their script. */
export function prefetchViews(): Promise<void> {
  return Promise.all([chatView.load(), contextPanel.load()]).then(() => undefined);
}
