// Going back in a session: which messages a revert hides, how many, and where a fork from an
// assistant reply ends.

import { toolView } from '$lib/parts';
import type { MessageView } from '$lib/state/transcript.svelte';
import type { Todo } from '$lib/types/Todo';
import type { TodoStatus } from '$lib/types/TodoStatus';

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

/** How many prompts (user messages) a revert hides: what the user sent, not the replies' steps. */
export function revertedPrompts(messages: MessageView[], revertId: string | undefined): number {
  const at = revertIndex(messages, revertId);
  return at < 0 ? 0 : messages.slice(at).filter((m) => m.info.role === 'user').length;
}

/** The messages a revert hides (the loaded ones). */
export function revertedMessages(messages: readonly MessageView[], revertId: string | undefined): MessageView[] {
  const at = revertIndex(messages as MessageView[], revertId);
  return at < 0 ? [] : messages.slice(at);
}

const TODO_STATUSES: readonly string[] = ['pending', 'in_progress', 'completed', 'cancelled'];

/**
 * The todo list as it stood at the revert point: the one the last `todowrite` call before it
 * set (empty when none did). OpenCode keeps the list a reverted turn wrote, so a reverted
 * session's dock reads it from the messages that remain.
 */
export function todosBefore(messages: MessageView[], revertId: string | undefined): Todo[] {
  const kept = visibleMessages(messages, revertId);
  for (let i = kept.length - 1; i >= 0; i--) {
    const parts = kept[i].parts;
    for (let j = parts.length - 1; j >= 0; j--) {
      const part = parts[j].part;
      if (part.type !== 'tool' || part.tool !== 'todowrite') continue;
      const view = toolView('todowrite', part.state);
      if (view.kind !== 'todos') continue;
      return view.todos.map((t) => ({
        content: t.content,
        status: (TODO_STATUSES.includes(t.status) ? t.status : 'pending') as TodoStatus,
        priority: t.priority,
      }));
    }
  }
  return [];
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
