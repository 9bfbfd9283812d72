// What a session changed (the Changes tab) and its todo list (the todo dock). The backend reads
// both from OpenCode; it pushes `filesChanged` when files may have changed (the tab asks again)
// and `todos` with the whole list when the agent updates it.

import { invoke } from '$lib/host';
import type { ChangeScope } from '$lib/types/ChangeScope';
import type { ChangeSet } from '$lib/types/ChangeSet';
import type { Session } from '$lib/types/Session';
import type { Tab } from '$lib/types/Tab';
import type { Todo } from '$lib/types/Todo';
import { t } from '$lib/i18n/index.svelte';
import { store, type FilesTouched } from '../store.svelte';
import { ui } from '../ui.svelte';
import { call } from './call';

/** Key of a session's Changes tab. */
export function changesTabKey(sessionId: string): string {
  return `changes:${sessionId}`;
}

/** The Changes tab of a session. */
export function changesTab(session: Session): Tab {
  return {
    mode: 'changes',
    dedupeKey: changesTabKey(session.id),
    label: t('changes.tab'),
    directory: session.directory,
    sessionId: session.id,
  };
}

/** Opens (or shows) a session's Changes tab in the context panel. */
export function openChangesTab(session: Session): void {
  ui.setPanelOpen(true);
  call({ cmd: 'openTab', tab: changesTab(session) }).catch(() => undefined);
}

/** The files a session changed in one scope. Errors are not toasts: the tab shows them. */
export function loadChanges(sessionId: string, scope: ChangeScope): Promise<ChangeSet> {
  return invoke({ cmd: 'changes', sessionId, scope });
}

/** Reads a session's todo list into the store (later lists are pushed). Errors are not
 * toasts: a session without a list just shows no dock. */
export async function loadTodos(sessionId: string): Promise<Todo[]> {
  const todos = await invoke({ cmd: 'todos', sessionId });
  store.setTodos(sessionId, todos);
  return todos;
}

/** Whether a pushed `filesChanged` concerns a change set (its session, or its folder). */
export function concerns(set: Pick<ChangeSet, 'sessionId' | 'directory'>, change: FilesTouched): boolean {
  if (change.sessionId !== undefined) return change.sessionId === set.sessionId;
  return change.directory === undefined || change.directory === set.directory;
}
