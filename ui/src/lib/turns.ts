// A transcript as the chat shows it: user messages, and turns. A turn is the run of assistant
// messages (steps: one per model call, tool calls between them) that answer the same user
// message (`parentID`), shown as one reply with one header and one action row.

import type { MessageView } from '$lib/state/transcript.svelte';
import { revertedMessages } from '$lib/history';
import type { MessageTokens } from '$lib/types/MessageTokens';

/** A row of the chat: a user message (or a header-less placeholder), or an assistant turn. */
export type ChatRow = { kind: 'message'; key: string; message: MessageView } | Turn;

/** The steps of one assistant turn, oldest first. `key` is the first step's id, so a turn that
 * grows keeps its row (and its measured height). */
export interface Turn {
  kind: 'turn';
  key: string;
  steps: readonly MessageView[];
  /** The user message it answers, when loaded. */
  prompt: MessageView | undefined;
}

/** Groups messages (ordered by id) into rows. Rows whose content did not change are the same
 * objects as in `previous`, so a keyed list re-renders only the rows that changed. */
export function groupRows(messages: readonly MessageView[], previous: readonly ChatRow[] = []): ChatRow[] {
  const old = new Map(previous.map((r) => [r.key, r]));
  const byId = new Map<string, MessageView>();
  const rows: ChatRow[] = [];
  let steps: MessageView[] = [];
  let parent: string | undefined;

  const flush = () => {
    if (steps.length === 0) return;
    const key = steps[0].id;
    const prompt = parent ? byId.get(parent) : undefined;
    const was = old.get(key);
    rows.push(
      was && was.kind === 'turn' && was.prompt === prompt && sameSteps(was.steps, steps)
        ? was
        : { kind: 'turn', key, steps, prompt },
    );
    steps = [];
    parent = undefined;
  };

  for (const m of messages) {
    byId.set(m.id, m);
    if (m.info.role !== 'assistant') {
      flush();
      const was = old.get(m.id);
      rows.push(was && was.kind === 'message' && was.message === m ? was : { kind: 'message', key: m.id, message: m });
      continue;
    }
    const p = m.info.parentID;
    if (steps.length > 0 && (p === undefined || p !== parent)) flush();
    if (steps.length === 0) parent = p;
    steps.push(m);
  }
  flush();
  return rows;
}

function sameSteps(a: readonly MessageView[], b: readonly MessageView[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Cost, tokens and time of a turn (or a session). */
export interface Usage {
  cost: number;
  tokens: number;
  /** Input, output, reasoning, cache read, cache write. */
  parts: { input: number; output: number; reasoning: number; cacheRead: number; cacheWrite: number };
  /** Milliseconds from the prompt (or the first step) to the last step's end; null while it runs. */
  durationMs: number | null;
}

/** Adds up tokens. */
export function tokenTotal(t: MessageTokens | undefined): number {
  if (!t) return 0;
  return (t.input || 0) + (t.output || 0) + (t.reasoning || 0) + (t.cache?.read || 0) + (t.cache?.write || 0);
}

/** What a turn cost and how long it took. */
export function turnUsage(turn: Turn): Usage {
  const parts = { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 };
  let cost = 0;
  for (const s of turn.steps) {
    cost += s.info.cost ?? 0;
    const t = s.info.tokens;
    if (!t) continue;
    parts.input += t.input || 0;
    parts.output += t.output || 0;
    parts.reasoning += t.reasoning || 0;
    parts.cacheRead += t.cache?.read || 0;
    parts.cacheWrite += t.cache?.write || 0;
  }
  const last = turn.steps[turn.steps.length - 1];
  const start = turn.prompt?.info.time.created || turn.steps[0].info.time.created;
  const end = last.info.time.completed;
  return {
    cost,
    tokens: parts.input + parts.output + parts.reasoning + parts.cacheRead + parts.cacheWrite,
    parts,
    durationMs: end !== undefined && start > 0 && end >= start ? end - start : null,
  };
}

/** The visible text of a whole turn: every step's text, joined by blank lines. */
export function turnText(turn: Turn): string {
  return turn.steps
    .map((s) => s.visibleText())
    .filter((t) => t.trim() !== '')
    .join('\n\n');
}

/** The newest step of a turn that has text (the one the transfer and review name), if any. */
export function turnTextStep(turn: Turn): MessageView | undefined {
  for (let i = turn.steps.length - 1; i >= 0; i--) if (turn.steps[i].visibleText().trim() !== '') return turn.steps[i];
  return undefined;
}

/**
 * A session's total: the server's sum when it sends one, else the loaded messages' sum. A
 * reverted session (`revertId`, its first undone message) leaves out what the undone replies
 * used: the server's sum still counts them.
 */
export function sessionUsage(
  session: { cost?: number; tokens?: MessageTokens } | undefined,
  messages: readonly MessageView[],
  revertId?: string,
): { usage: Usage; fromServer: boolean } {
  const parts = { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 };
  const add = (t: MessageTokens | undefined, sign = 1) => {
    if (!t) return;
    parts.input += sign * (t.input || 0);
    parts.output += sign * (t.output || 0);
    parts.reasoning += sign * (t.reasoning || 0);
    parts.cacheRead += sign * (t.cache?.read || 0);
    parts.cacheWrite += sign * (t.cache?.write || 0);
  };
  const fromServer = session !== undefined && (session.cost !== undefined || session.tokens !== undefined);
  const undone = new Set(revertedMessages(messages, revertId));
  let cost = 0;
  if (fromServer) {
    cost = session.cost ?? 0;
    add(session.tokens);
    for (const m of undone) {
      if (m.info.role !== 'assistant') continue;
      cost -= m.info.cost ?? 0;
      add(m.info.tokens, -1);
    }
    cost = Math.max(0, cost);
    for (const key of Object.keys(parts) as (keyof typeof parts)[]) parts[key] = Math.max(0, parts[key]);
  } else {
    for (const m of messages) {
      if (m.info.role !== 'assistant' || undone.has(m)) continue;
      cost += m.info.cost ?? 0;
      add(m.info.tokens);
    }
  }
  return {
    usage: { cost, tokens: parts.input + parts.output + parts.reasoning + parts.cacheRead + parts.cacheWrite, parts, durationMs: null },
    fromServer,
  };
}
