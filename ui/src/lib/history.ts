// Going back in a session: which messages a revert hides, how many, and where a fork from an
// assistant reply ends.

import type { MessageView } from '$lib/state/transcript.svelte';

/** The index of the first reverted message, or -1 when nothing is reverted (or it is not loaded). */
function revertIndex(messages: MessageView[], revertId: string | undefined): number {
  if (!revertId) return -1;
  const at = messages.findIndex((m) => m.id === revertId);
  if (at >= 0) return at;
  // Not loaded (or gone): ids are time-ordered, so the first one after it.
  return messages.findIndex((m) => m.id > revertId);
}

/** The messages to show: those before the revert point (OpenCode's own app hides the rest). */
export function visibleMessages(messages: MessageView[], revertId: string | undefined): MessageView[] {
  const at = revertIndex(messages, revertId);
  return at < 0 ? messages : messages.slice(0, at);
}

/** How many messages a revert hides. */
export function revertedCount(messages: MessageView[], revertId: string | undefined): number {
  const at = revertIndex(messages, revertId);
  return at < 0 ? 0 : messages.length - at;
}

/**
 * The message a fork is cut before: for a user message, that message (the fork holds what came
 * before it); for an assistant reply, the next user message after it, so the fork holds the
 * whole turn (undefined: the fork holds everything).
 */
export function forkPoint(messages: MessageView[], message: MessageView): string | undefined {
  if (message.info.role === 'user') return message.id;
  const at = messages.findIndex((m) => m.id === message.id);
  if (at < 0) return undefined;
  return messages.slice(at + 1).find((m) => m.info.role === 'user')?.id;
}
