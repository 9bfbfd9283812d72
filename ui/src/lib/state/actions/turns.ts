// Turn actions: prompts, slash commands, stopping a turn, answering permission requests, and
// sending what was typed while the server was gone.

import type { Attachment } from '$lib/types/Attachment';
import type { CommandStarted } from '$lib/types/CommandStarted';
import type { ModelChoice } from '$lib/types/ModelChoice';
import type { PermissionReplyKind } from '$lib/types/PermissionReplyKind';
import type { Sent } from '$lib/types/Sent';
import { serverQueued } from '$lib/queued';
import type { MessageView } from '../transcript.svelte';
import { getDraft, setDraft } from '../drafts';
import { outbox } from '../outbox.svelte';
import { store } from '../store.svelte';
import { call } from './call';

/** A choice with its empty parts left out; undefined when nothing is chosen. */
export function cleanChoice(choice: ModelChoice | undefined): ModelChoice | undefined {
  if (!choice) return undefined;
  const out: ModelChoice = {};
  if (choice.model?.providerID && choice.model.modelID) out.model = choice.model;
  if (choice.agent) out.agent = choice.agent;
  if (choice.variant) out.variant = choice.variant;
  return Object.keys(out).length ? out : undefined;
}

/**
 * Sends what the user typed, with the files attached; `revertTo` (edit and resend) reverts the
 * session to that message first, so the new one replaces it.
 */
export function sendPrompt(
  sessionId: string,
  text: string,
  choice?: ModelChoice,
  attachments: Attachment[] = [],
  revertTo?: string,
): Promise<Sent> {
  const c = cleanChoice(choice);
  return call({
    cmd: 'sendPrompt',
    sessionId,
    text,
    ...(c ? { choice: c } : {}),
    ...(attachments.length ? { attachments } : {}),
    ...(revertTo ? { revertTo } : {}),
  });
}

/** Runs a slash command (the server's or one of Crosscheck's). */
export function runCommand(sessionId: string, command: string, args: string, choice?: ModelChoice): Promise<CommandStarted> {
  const c = cleanChoice(choice);
  return call({ cmd: 'runCommand', sessionId, command, arguments: args, ...(c ? { choice: c } : {}) });
}

/** Stops the running turn. */
export function abort(sessionId: string): Promise<null> {
  return call({ cmd: 'abort', sessionId });
}

/**
 * Stops the running turn and cancels the prompts waiting behind it: those Crosscheck holds
 * (typed while the agent worked) and those OpenCode holds, which it drops without a reply when
 * the turn stops. Answers their texts, oldest first, for the message box; nothing is cancelled
 * when the stop fails.
 */
export async function stopTurn(sessionId: string, messages: readonly MessageView[]): Promise<string[]> {
  const onServer = serverQueued(messages).map((m) => m.visibleText());
  // Taken out first: the turn may end (and the outbox flush) before the stop's answer arrives.
  const held = outbox.of(sessionId).flatMap((q) => outbox.take(q.id) ?? []);
  try {
    await abort(sessionId);
  } catch (err) {
    for (const q of held.reverse()) outbox.putBack(q);
    throw err;
  }
  return [...onServer, ...held.map((q) => q.text)].filter((text) => text.trim() !== '');
}

/** Answers a pending permission request; the backend pushes its resolution. */
export function replyPermission(sessionId: string, requestId: string, reply: PermissionReplyKind): Promise<null> {
  return call({ cmd: 'replyPermission', sessionId, requestId, reply });
}

/** Whether the OpenCode server is connected now (else messages are queued). */
export function online(): boolean {
  return store.connection.state === 'ready';
}

let flushing = false;

/** Sends the queued messages in order, once connected, each when its session is idle (a
 * session still working keeps its messages until its turn ends). A send that fails while the
 * server is gone again stays queued; any other failure is shown (a toast) and its text goes
 * back into the session's draft, so nothing typed is lost. */
export async function flushOutbox(): Promise<void> {
  if (flushing) return;
  flushing = true;
  try {
    for (;;) {
      if (!online()) return;
      const next = outbox.items.find((q) => store.statusOf(q.sessionId) === 'idle');
      if (!next) return;
      const item = outbox.take(next.id);
      if (!item) continue;
      try {
        if (item.command) await runCommand(item.sessionId, item.command.name, item.command.args, item.choice);
        else await sendPrompt(item.sessionId, item.text, item.choice);
      } catch {
        if (!online()) {
          outbox.putBack(item);
          return;
        }
        const draft = getDraft(item.sessionId).trim();
        setDraft(item.sessionId, draft ? `${item.text}\n\n${draft}` : item.text);
      }
    }
  } finally {
    flushing = false;
  }
}
