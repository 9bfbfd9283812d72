// How tall a chat row will be before it is rendered, guessed from its text: the virtual list
// builds only the rows that fill the view, so a long markdown reply must not count as a short
// one (a fixed guess built four 600 px replies for a 630 px view). The guess errs low (narrow
// lines, no margins for blank lines beyond a few pixels), so the rows it picks fill the view.

import type { MessageView } from '$lib/state/transcript.svelte';
import type { ChatRow } from '$lib/turns';

/** Header, padding and action row of a message. */
const ROW_BASE = 40;
/** One line of text (prose or code). */
const LINE = 19;
/** A blank line between markdown blocks (their margins). */
const BLANK = 6;
/** Characters that fit on a line of the chat before prose wraps (a wide chat: errs low). */
const LINE_CHARS = 100;
/** A tool call, file or other one-line part. */
const PART_LINE = 30;
/** Longest text looked at: beyond it the guess is capped (the row is taller than any view). */
const SCAN_MAX = 20_000;

/** The guessed height of a text, in pixels. Scans at most `SCAN_MAX` characters. */
export function estimateTextHeight(text: string): number {
  const end = Math.min(text.length, SCAN_MAX);
  let height = 0;
  let start = 0;
  while (start < end) {
    let nl = text.indexOf('\n', start);
    if (nl < 0 || nl > end) nl = end;
    const len = nl - start;
    if (isBlank(text, start, nl)) height += BLANK;
    else height += LINE * (1 + Math.floor(len / LINE_CHARS));
    start = nl + 1;
  }
  return height;
}

function isBlank(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 13) return false;
  }
  return true;
}

function messageHeight(message: MessageView): number {
  let height = 0;
  for (const view of message.parts) {
    const part = view.part;
    if (part.type === 'text') {
      if (!part.synthetic && !part.ignored) height += estimateTextHeight(view.text);
    } else if (part.type === 'reasoning' || part.type === 'tool' || part.type === 'file' || part.type === 'subtask' || part.type === 'agent') {
      height += PART_LINE;
    }
  }
  return height;
}

/** The guessed height of a chat row (a user message or an assistant turn), in pixels. */
export function estimateRowHeight(row: ChatRow): number {
  if (row.kind === 'message') return ROW_BASE + Math.max(LINE, messageHeight(row.message));
  let height = ROW_BASE;
  for (const step of row.steps) height += messageHeight(step);
  return Math.max(ROW_BASE + LINE, height);
}
