// Cold review rows: labels and the reviewer's reply as markdown (the backend lists the findings).

import type { LedgerEntry } from '$lib/types/LedgerEntry';

/** A check line of a reviewer's reply (`P1 FAIL — …`, `- J3 PASS …`, `VERDICT: …`). */
const CHECK_LINE = /^\s*(?:[-*+]\s+|\d+[.)]\s+)?[*_`]*(?:[PJ][1-8]\b|VERDICT:)/i;

/** Markdown decoration around a line's words. */
function undecorated(line: string): string {
  return line.replace(/[*_`]/g, '').replace(/^\s*(?:[-+]\s+|\d+[.)]\s+)/, '').trim();
}

/** The reply with each check line as its own paragraph: reviewers write one check per line,
 * which markdown would otherwise join into one paragraph. */
export function reviewMarkdown(review: string): string {
  const lines = review.replace(/\r\n/g, '\n').split('\n');
  const out: string[] = [];
  for (const line of lines) {
    const isCheck = CHECK_LINE.test(line) && !/^\s*(?:[-*+]\s|\d+[.)]\s)/.test(line);
    if (isCheck && out.length > 0 && out[out.length - 1].trim() !== '') out.push('');
    out.push(line);
  }
  return out.join('\n');
}

/** Identity of a row across refreshes. */
export function rowId(entry: Pick<LedgerEntry, 'kind' | 'key'>): string {
  return `${entry.kind}:${entry.key}`;
}

/** The last segment of a path (`/a/b/plan.md` → `plan.md`). */
export function baseName(path: string): string {
  const trimmed = path.replace(/[\\/]+$/, '');
  const i = Math.max(trimmed.lastIndexOf('/'), trimmed.lastIndexOf('\\'));
  return i >= 0 ? trimmed.slice(i + 1) || trimmed : trimmed;
}

/** Seconds with one decimal, for review durations. */
export function seconds(ms: number): string {
  return (Math.round(ms / 100) / 10).toFixed(1);
}
