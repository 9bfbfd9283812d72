// Composer drafts per session: the text in memory and in localStorage (so a reload keeps it);
// attached files and an edit in progress in memory only (a switch of sessions keeps them, a
// reload does not: files can weigh megabytes).

import type { ComposerFile } from '$lib/attachments';
import { load, save } from './persist';

const files = new Map<string, ComposerFile[]>();
const edits = new Map<string, string>();

/** The files attached in a session's composer. */
export function getDraftFiles(sessionId: string): ComposerFile[] {
  return files.get(sessionId) ?? [];
}

/** Keeps the files attached in a session's composer. */
export function setDraftFiles(sessionId: string, list: ComposerFile[]): void {
  if (list.length) files.set(sessionId, list);
  else files.delete(sessionId);
}

/** The earlier message a session's composer is editing (edit and resend), if any. */
export function getDraftEdit(sessionId: string): string | undefined {
  return edits.get(sessionId);
}

/** Keeps (or, with undefined, forgets) the message a session's composer is editing. */
export function setDraftEdit(sessionId: string, messageId: string | undefined): void {
  if (messageId) edits.set(sessionId, messageId);
  else edits.delete(sessionId);
}

const memory = new Map<string, string>();
const timers = new Map<string, ReturnType<typeof setTimeout>>();
const key = (sessionId: string) => `crosscheck.draft.${sessionId}`;

export function getDraft(sessionId: string): string {
  const cached = memory.get(sessionId);
  if (cached !== undefined) return cached;
  const stored = load<string>(key(sessionId), '');
  memory.set(sessionId, stored);
  return stored;
}

export function setDraft(sessionId: string, text: string): void {
  memory.set(sessionId, text);
  const pending = timers.get(sessionId);
  if (pending) clearTimeout(pending);
  timers.set(
    sessionId,
    setTimeout(() => {
      timers.delete(sessionId);
      save(key(sessionId), text);
    }, 300),
  );
}

export function clearDraft(sessionId: string): void {
  const pending = timers.get(sessionId);
  if (pending) clearTimeout(pending);
  timers.delete(sessionId);
  memory.set(sessionId, '');
  save(key(sessionId), '');
}
