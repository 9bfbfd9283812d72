// Line comments and loop cost, apart from their markup: the lines a selection quotes, which
// comments are still in the batch, and the figures of a loop's rounds and its budget.

import type { FileDiff } from '$lib/diff';
import type { LineComment } from '$lib/types/LineComment';
import type { LoopBudget } from '$lib/types/LoopBudget';
import type { LoopState } from '$lib/types/LoopState';

/** A range of new-side lines of one file, first to last (1-based, inclusive). */
export interface LineRange {
  start: number;
  end: number;
}

/** The range from the line first picked (`anchor`) to the line picked now, in order. */
export function rangeOf(anchor: number, head: number): LineRange {
  return anchor <= head ? { start: anchor, end: head } : { start: head, end: anchor };
}

/** The new-side text of `range` in `file`, joined by newlines; `null` when the diff does not
 * show every line of it (a range across a gap cannot be quoted). */
export function quoteOf(file: FileDiff, range: LineRange): string | null {
  const byLine = new Map<number, string>();
  for (const hunk of file.hunks) {
    for (const line of hunk.lines) {
      if (line.newNo !== null && line.newNo >= range.start && line.newNo <= range.end) byLine.set(line.newNo, line.text);
    }
  }
  const out: string[] = [];
  for (let n = range.start; n <= range.end; n++) {
    const text = byLine.get(n);
    if (text === undefined) return null;
    out.push(text);
  }
  return out.join('\n');
}

/** The comments still in the batch (written, not sent). */
export function draftsOf(comments: readonly LineComment[] | undefined): LineComment[] {
  return (comments ?? []).filter((c) => c.status === 'draft');
}

/** The comments the person still waits on: in the batch or sent and not yet addressed. */
export function liveCount(comments: readonly LineComment[] | undefined): number {
  return (comments ?? []).filter((c) => c.status === 'draft' || c.status === 'open').length;
}

/** Whether line `line` of `path` carries a live comment of the list. */
export function commentedLine(comments: readonly LineComment[] | undefined, path: string, line: number): boolean {
  return (comments ?? []).some(
    (c) => (c.status === 'draft' || c.status === 'open') && c.path === path && line >= c.startLine && line <= c.endLine,
  );
}

/** `path` relative to `directory` when it lies inside it (the backend keeps relative paths). */
export function pathInFolder(path: string, directory: string | undefined): string {
  if (!directory) return path;
  const dir = directory.endsWith('/') ? directory : `${directory}/`;
  return path.startsWith(dir) ? path.slice(dir.length) : path;
}

/** A loop's figures over every round: tokens, cost in dollars, wall time in ms up to `now`
 * (or the stop). */
export function loopTotals(loop: LoopState, now: number): { tokens: number; cost: number; ms: number } {
  const costs = loop.costs ?? [];
  const end = loop.ended && loop.stop ? loop.stop.at : now;
  return {
    tokens: costs.reduce((n, c) => n + c.tokens, 0),
    cost: costs.reduce((n, c) => n + c.costMicros, 0) / 1_000_000,
    ms: Math.max(0, end - loop.startedAt),
  };
}

/** Dollars as the figures show them: four decimals under a dollar, else two. */
export function formatCost(dollars: number): string {
  return `$${dollars < 1 ? dollars.toFixed(4) : dollars.toFixed(2)}`;
}

/** A budget field's value: text, or the number (or null when empty) a number input binds. */
export type BudgetField = string | number | null;

/** The fields of a budget form: empty or not a positive number means no limit. */
export interface BudgetForm {
  tokens: BudgetField;
  dollars: BudgetField;
  minutes: BudgetField;
}

function positive(value: BudgetField): number | undefined {
  const text = String(value ?? '').trim();
  const n = Number(text);
  return text !== '' && Number.isFinite(n) && n > 0 ? n : undefined;
}

/** The budget a form describes (the backend takes money in millionths of a dollar). */
export function budgetOf(form: BudgetForm): LoopBudget {
  const out: LoopBudget = {};
  const tokens = positive(form.tokens);
  if (tokens !== undefined) out.tokens = Math.round(tokens);
  const dollars = positive(form.dollars);
  if (dollars !== undefined) out.costMicros = Math.max(1, Math.round(dollars * 1_000_000));
  const minutes = positive(form.minutes);
  if (minutes !== undefined) out.minutes = Math.min(7 * 24 * 60, Math.max(1, Math.round(minutes)));
  return out;
}

/** The form showing `budget`. */
export function formOf(budget: LoopBudget | undefined): BudgetForm {
  return {
    tokens: budget?.tokens != null ? String(budget.tokens) : '',
    dollars: budget?.costMicros != null ? String(budget.costMicros / 1_000_000) : '',
    minutes: budget?.minutes != null ? String(budget.minutes) : '',
  };
}
