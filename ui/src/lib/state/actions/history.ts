// Going back and branching off: revert, redo, edit and resend, fork; and the `@` file search.

import { forkPoint } from '$lib/history';
import { invoke } from '$lib/host';
import { t } from '$lib/i18n/index.svelte';
import type { SessionView } from '$lib/types/SessionView';
import { setDraft } from '../drafts';
import { store } from '../store.svelte';
import { toasts } from '../toasts.svelte';
import type { MessageView } from '../transcript.svelte';
import { call } from './call';
import { selectSession } from './sessions';

function keep(session: SessionView): void {
  if (session?.id) store.sessions.set(session.id, session);
}

/** Reverts a session to a user message: it and everything after it are undone. */
export async function revertTo(sessionId: string, messageId: string): Promise<void> {
  keep(await call({ cmd: 'revertSession', sessionId, messageId }));
}

/** Brings back what a revert undid. */
export async function redo(sessionId: string): Promise<void> {
  keep(await call({ cmd: 'unrevertSession', sessionId }));
}

/**
 * Forks the session at a message and opens the fork. From a user message the fork holds what
 * came before it and its composer holds the message's text; from a reply, the whole turn.
 */
export async function forkFrom(sessionId: string, message: MessageView): Promise<SessionView> {
  const messages = store.transcripts.get(sessionId)?.messages ?? [];
  const messageId = forkPoint(messages, message);
  const session = await call({ cmd: 'forkSession', sessionId, ...(messageId ? { messageId } : {}) });
  if (!store.sessions.has(session.id)) store.sessions.set(session.id, session);
  if (message.info.role === 'user') setDraft(session.id, message.visibleText());
  selectSession(session.id);
  toasts.push('success', t('history.forked'));
  return session;
}

/** Files of the session's folder matching an `@` mention; the caller shows failures. */
export function findFiles(sessionId: string, query: string): Promise<string[]> {
  return invoke({ cmd: 'findFiles', sessionId, query });
}
