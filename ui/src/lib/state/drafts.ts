// Composer drafts per session: in memory, and in localStorage so a reload keeps them.

import { load, save } from './persist';

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
