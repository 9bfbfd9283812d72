// Session actions: selecting, creating, renaming, archiving and deleting sessions.

import { invoke } from '$lib/host';
import type { FolderChoices } from '$lib/types/FolderChoices';
import type { ServerId } from '$lib/types/ServerId';
import type { SessionView } from '$lib/types/SessionView';
import { store } from '../store.svelte';
import { ui } from '../ui.svelte';
import { call } from './call';
import { changesTabKey } from './changes';
import { sessionTabKey } from './tabs';

/** Shows a session in the main area (null: none) and, in the pair view, its partner in the
 * side panel: the backend moves the panel's follow tab (ADR: it owns the tabs). */
export function selectSession(sessionId: string | null): void {
  ui.select(sessionId);
  if (sessionId) call({ cmd: 'showPair', sessionId }).catch(() => undefined);
}

/** Creates a session in a folder and selects it. Failures are thrown, not shown: the dialog
 * shows a refused folder at its field and toasts the rest. */
export async function createSession(directory: string, title?: string): Promise<SessionView> {
  const session = await invoke({ cmd: 'createSession', directory, ...(title ? { title } : {}) });
  ui.rememberDirectory(session?.directory || directory);
  if (session?.id) {
    if (!store.sessions.has(session.id)) store.sessions.set(session.id, session);
    selectSession(session.id);
  }
  return session;
}

/** The folders New session suggests (recent ones first, then the known ones of the server,
 * the main one when none is named). */
export async function loadFolders(serverId?: ServerId): Promise<FolderChoices> {
  return call({ cmd: 'folders', serverId });
}

/** Renames a session. */
export async function renameSession(sessionId: string, title: string): Promise<void> {
  const session = await call({ cmd: 'renameSession', sessionId, title });
  if (session?.id) store.sessions.set(session.id, session);
}

/** Archives or restores a session. */
export async function archiveSession(sessionId: string, archived: boolean): Promise<void> {
  const session = await call({ cmd: 'archiveSession', sessionId, archived });
  if (session?.id) store.sessions.set(session.id, session);
}

/** Deletes a session (the backend removes its review link first). */
export async function deleteSession(sessionId: string): Promise<void> {
  await call({ cmd: 'deleteSession', sessionId });
  store.sessions.delete(sessionId);
  forgetSession(sessionId);
}

/** Clean-up after a session disappeared: its tab, the selection. */
export function forgetSession(sessionId: string): void {
  for (const key of [sessionTabKey(sessionId), changesTabKey(sessionId)]) {
    if (store.tabs.some((tab) => tab.dedupeKey === key)) {
      call({ cmd: 'closeTab', key }).catch(() => undefined);
    }
  }
  if (ui.selectedSessionId === sessionId) ui.select(null);
}
