// Slash commands: parsing the composer's text and filtering the autocomplete list.

import type { CommandEntry } from '$lib/types/CommandEntry';

/** Crosscheck's own review handoff command. */
export const HANDOFF_COMMAND = 'handoff-review';

/** Crosscheck's cold review command: `/cold-review [file]`. */
export const COLD_REVIEW_COMMAND = 'cold-review';

/** `/name args` → `{name, args}`; null when the text is not a command. */
export function parseCommand(text: string): { name: string; args: string } | null {
  const m = /^\/([^\s/]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  return m ? { name: m[1], args: (m[2] ?? '').trim() } : null;
}

/** The query while the user is typing a command name (`/rev` → `rev`), else null. */
export function commandQuery(text: string): string | null {
  const m = /^\/(\S*)$/.exec(text);
  return m ? m[1].toLowerCase() : null;
}

/** Commands matching a query: prefix matches first, then substring matches. */
export function filterCommands(commands: readonly CommandEntry[], query: string): CommandEntry[] {
  if (!query) return [...commands];
  const prefix: CommandEntry[] = [];
  const inner: CommandEntry[] = [];
  for (const c of commands) {
    const name = c.name.toLowerCase();
    if (name.startsWith(query)) prefix.push(c);
    else if (name.includes(query)) inner.push(c);
  }
  return [...prefix, ...inner];
}
