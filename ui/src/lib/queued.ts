// Prompts that wait while the agent works. Crosscheck holds what is typed during a turn in the
// outbox and sends it when the turn ends; a prompt that reached OpenCode during a turn anyway
// (files, an edit, or sent before the busy status arrived) waits in OpenCode's own queue, and
// OpenCode drops it without a reply when the turn is stopped. Both are counted when Stop is
// pressed, and their text goes back into the message box.

import type { MessageView } from '$lib/state/transcript.svelte';

/**
 * The user messages OpenCode holds behind the prompt it is answering: sent, unanswered, and
 * after the one being answered. When the newest answered prompt's reply is still running, every
 * unanswered prompt after it waits; when that reply has completed, the first unanswered prompt
 * is the one whose turn is starting and only those after it wait. Only meaningful while the
 * session is busy.
 */
export function serverQueued(messages: readonly MessageView[]): MessageView[] {
  const answered = new Set<string>();
  let lastAnswered = -1;
  let running = false;
  for (const m of messages) {
    if (m.info.role === 'assistant' && m.info.parentID) answered.add(m.info.parentID);
  }
  messages.forEach((m, i) => {
    if (m.info.role === 'user' && answered.has(m.id)) lastAnswered = i;
  });
  if (lastAnswered >= 0) {
    const prompt = messages[lastAnswered].id;
    running = messages.some(
      (m) => m.info.role === 'assistant' && m.info.parentID === prompt && m.info.time.completed === undefined && !m.info.error,
    );
  }
  const waiting = messages.slice(lastAnswered + 1).filter((m) => m.info.role === 'user' && !answered.has(m.id));
  return running ? waiting : waiting.slice(1);
}

/** The text a cancelled prompt puts back into the message box: each prompt's text, oldest
 * first, then what was typed already, separated by blank lines; empty pieces left out. */
export function restoredDraft(cancelled: readonly string[], draft: string): string {
  return [...cancelled, draft]
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .join('\n\n');
}
