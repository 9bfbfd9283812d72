// The Findings list's logic, apart from its markup: filtering by status and severity, the
// counts the filters show, a finding's history grouped by round, and which findings a
// reviewer's turn offers to "Send selected findings" (with the default selection).

import { t } from '$lib/i18n/index.svelte';
import type { FindingRound } from '$lib/types/FindingRound';
import type { FindingStatus } from '$lib/types/FindingStatus';
import type { FindingView } from '$lib/types/FindingView';
import type { FindingsView } from '$lib/types/FindingsView';
import type { RoundCoverage } from '$lib/types/RoundCoverage';
import type { Severity } from '$lib/types/Severity';
import type { UnchangedLines } from '$lib/types/UnchangedLines';

/** Every status, in the order the filter offers them. */
export const STATUSES: readonly FindingStatus[] = ['open', 'disputed', 'claimedFixed', 'fixed', 'withdrawn'];
/** Every severity, most serious first. */
export const SEVERITIES: readonly Severity[] = ['blocker', 'major', 'minor', 'nit'];

/** A filter value: one status or severity, or every one. */
export type StatusFilter = FindingStatus | 'all';
/** A severity filter value. */
export type SeverityFilter = Severity | 'all';

/** The findings that pass both filters, in the backend's id order. */
export function filterFindings(findings: readonly FindingView[], status: StatusFilter, severity: SeverityFilter): FindingView[] {
  return findings.filter((f) => (status === 'all' || f.status === status) && (severity === 'all' || f.severity === severity));
}

/** How many findings have each status (every status present, zero when none). */
export function countByStatus(findings: readonly FindingView[]): Record<FindingStatus, number> {
  const out: Record<FindingStatus, number> = { open: 0, disputed: 0, claimedFixed: 0, fixed: 0, withdrawn: 0 };
  for (const f of findings) out[f.status] += 1;
  return out;
}

/** How many findings the reviewer has not closed: open, disputed, or only claimed fixed by the
 * implementer (fixed is the reviewer's word, by id). */
export function notClosedCount(findings: readonly FindingView[]): number {
  return findings.filter((f) => f.status === 'open' || f.status === 'disputed' || f.status === 'claimedFixed').length;
}

/** How many findings have each severity. */
export function countBySeverity(findings: readonly FindingView[]): Record<Severity, number> {
  const out: Record<Severity, number> = { blocker: 0, major: 0, minor: 0, nit: 0 };
  for (const f of findings) out[f.severity] += 1;
  return out;
}

/** One round of a finding's history: what the reviewer said and what the implementer
 * answered in it (either may be absent). */
export interface RoundEntry {
  round: number;
  reviewer?: FindingRound;
  implementer?: FindingRound;
  /** The implementer claimed a fix while the code did not change that round. */
  claimedUnchanged: boolean;
  /** With `claimedUnchanged`: the finding's lines that stayed as they were, when known. */
  unchangedLines?: UnchangedLines;
}

/** A finding's history grouped by round, oldest first; a side that spoke twice in one round
 * (not expected) keeps its newest entry. */
export function historyByRound(history: readonly FindingRound[]): RoundEntry[] {
  const rounds = new Map<number, RoundEntry>();
  for (const h of history) {
    const entry = rounds.get(h.round) ?? { round: h.round, claimedUnchanged: false };
    if (h.side === 'reviewer') entry.reviewer = h;
    else entry.implementer = h;
    entry.claimedUnchanged ||= h.claimedUnchanged;
    if (h.claimedUnchanged && h.unchangedLines) entry.unchangedLines = h.unchangedLines;
    rounds.set(h.round, entry);
  }
  return [...rounds.values()].sort((a, b) => a.round - b.round);
}

/** The recorded reviewer reply among a turn's step ids (rounds are recorded under a step). */
export function roundMessageOf(view: FindingsView | undefined, stepIds: readonly string[]): string | undefined {
  if (!view) return undefined;
  for (let i = stepIds.length - 1; i >= 0; i--) {
    if (view.rounds.some((r) => r.messageId === stepIds[i])) return stepIds[i];
  }
  return undefined;
}

/** The findings reviewer reply `messageId` opened or kept open: what its picker offers. */
export function messageFindings(view: FindingsView | undefined, messageId: string | undefined): FindingView[] {
  if (!view || !messageId) return [];
  return view.findings.filter((f) =>
    f.history.some((h) => h.side === 'reviewer' && h.messageId === messageId && (h.status === 'open' || h.status === 'disputed')),
  );
}

/** The picker's default choice: blockers and majors checked, minors and nits not. */
export function defaultSelection(findings: readonly FindingView[]): Set<string> {
  return new Set(findings.filter((f) => f.severity === 'blocker' || f.severity === 'major').map((f) => f.id));
}

/** What a round says it reviewed, in the words the round line shows: "covered 12 of 14
 * changed files", the count when the changed files are unknown, or that it named none. */
/** "Claimed fixed, code unchanged" for a finding, naming its lines when they were kept:
 * "Claimed fixed, but lines 8-14 of src/greet.rs are unchanged" (and where they are now, when
 * lines above them moved them). */
export function unchangedWords(lines: UnchangedLines | undefined): string {
  if (!lines) return t('findings.claimedUnchanged');
  const words = t('findings.claimedUnchangedLines', { first: lines.firstLine, last: lines.lastLine, path: lines.path });
  if (lines.nowFirstLine == null || lines.nowFirstLine === lines.firstLine) return words;
  const now = t('findings.unchangedNowAt', { first: lines.nowFirstLine, last: lines.nowFirstLine + (lines.lastLine - lines.firstLine) });
  return `${words} ${now}`;
}

export function coverageWords(coverage: RoundCoverage): string {
  if (coverage.reviewed.length === 0) return t('findings.coverageNone');
  if (coverage.changed == null) return t('findings.coverageUnknown', { count: coverage.reviewed.length });
  const total = coverage.changed.length;
  return t('findings.coverage', { covered: total - coverage.uncovered.length, total });
}
