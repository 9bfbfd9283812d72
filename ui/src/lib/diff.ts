// The model of a file's diff for `DiffView`: lines with their numbers on both sides, built from
// a unified patch (jsdiff's parser) or from the texts before and after (jsdiff's line diff);
// long unchanged runs folded, and removed/added runs paired for the split view.

import { diffLines, parsePatch } from 'diff';

/** How a line of a diff changed. */
export type DiffLineKind = 'context' | 'add' | 'del';

/** One line of a diff. `oldIndex`/`newIndex` index the side's text as `sideTexts` builds it. */
export interface DiffLine {
  kind: DiffLineKind;
  oldNo: number | null;
  newNo: number | null;
  text: string;
  oldIndex: number | null;
  newIndex: number | null;
}

/** A run of lines; `hiddenBefore` lines of the file precede it unseen (unknown content). */
export interface DiffHunk {
  header: string;
  hiddenBefore: number;
  lines: DiffLine[];
}

/** One file's diff. */
export interface FileDiff {
  oldPath: string;
  newPath: string;
  hunks: DiffHunk[];
  added: number;
  removed: number;
  /** The line diff gave up (texts too large or too different): shown as all removed, all added. */
  approximate: boolean;
}

/** The line diff gives up after this long (a main-thread task stays short) and the diff is
 * shown approximately. */
const DIFF_TIME_MS = 30;

function splitLines(value: string): string[] {
  if (value === '') return [];
  const lines = value.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

class Builder {
  lines: DiffLine[] = [];
  oldIndex = 0;
  newIndex = 0;
  added = 0;
  removed = 0;

  push(kind: DiffLineKind, text: string, oldNo: number | null, newNo: number | null): void {
    const line: DiffLine = { kind, text, oldNo, newNo, oldIndex: null, newIndex: null };
    if (kind !== 'add') line.oldIndex = this.oldIndex++;
    if (kind !== 'del') line.newIndex = this.newIndex++;
    if (kind === 'add') this.added++;
    if (kind === 'del') this.removed++;
    this.lines.push(line);
  }
}

/** The diff of two texts, one hunk with every line (folding is the view's job). */
export function diffTexts(before: string, after: string, path = ''): FileDiff {
  const b = new Builder();
  // Nothing on one side needs no search (jsdiff would walk every edit length).
  const changes =
    before === '' || after === ''
      ? [
          { value: before, added: false, removed: true, count: 0 },
          { value: after, added: true, removed: false, count: 0 },
        ]
      : diffLines(before, after, { timeout: DIFF_TIME_MS });
  let oldNo = 1;
  let newNo = 1;
  const approximate = changes === undefined;
  const list = changes ?? [
    { value: before, added: false, removed: true, count: 0 },
    { value: after, added: true, removed: false, count: 0 },
  ];
  for (const change of list) {
    for (const text of splitLines(change.value)) {
      if (change.added) b.push('add', text, null, newNo++);
      else if (change.removed) b.push('del', text, oldNo++, null);
      else b.push('context', text, oldNo++, newNo++);
    }
  }
  return {
    oldPath: path,
    newPath: path,
    hunks: b.lines.length ? [{ header: '', hiddenBefore: 0, lines: b.lines }] : [],
    added: b.added,
    removed: b.removed,
    approximate,
  };
}

function stripPrefix(name: string | undefined): string {
  if (!name || name === '/dev/null') return '';
  return name.replace(/^[ab]\//, '');
}

/** The files of a unified patch (`diff -u`, `git diff`); text that is no patch gives []. */
export function parseUnifiedPatch(patch: string): FileDiff[] {
  let parsed: ReturnType<typeof parsePatch>;
  try {
    parsed = parsePatch(patch);
  } catch {
    return [];
  }
  const files: FileDiff[] = [];
  for (const p of parsed) {
    if (p.hunks.length === 0) continue;
    const b = new Builder();
    const hunks: DiffHunk[] = [];
    let nextOld = 1;
    for (const h of p.hunks) {
      const start = b.lines.length;
      let oldNo = h.oldStart;
      let newNo = h.newStart;
      // A pure insertion's header names the line before it (`-0,0` for a new file); the
      // parser already moves that to the line after it, the first old line not shown yet.
      const firstOld = h.oldStart;
      for (const raw of h.lines) {
        const mark = raw[0];
        const text = raw.slice(1);
        if (mark === '+') b.push('add', text, null, newNo++);
        else if (mark === '-') b.push('del', text, oldNo++, null);
        else if (mark === ' ') b.push('context', text, oldNo++, newNo++);
        // '\' (no newline at end of file) and anything else carry no line.
      }
      hunks.push({
        header: `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`,
        hiddenBefore: Math.max(0, firstOld - nextOld),
        lines: b.lines.slice(start),
      });
      nextOld = h.oldStart + h.oldLines;
    }
    files.push({
      oldPath: stripPrefix(p.oldFileName),
      newPath: stripPrefix(p.newFileName) || stripPrefix(p.oldFileName),
      hunks,
      added: b.added,
      removed: b.removed,
      approximate: false,
    });
  }
  return files;
}

/** The old and new side's text as the diff shows them (context and removed lines; context and
 * added lines), for highlighting each side in one go. */
export function sideTexts(diff: FileDiff): { old: string; new: string } {
  const oldLines: string[] = [];
  const newLines: string[] = [];
  for (const h of diff.hunks) {
    for (const l of h.lines) {
      if (l.oldIndex !== null) oldLines[l.oldIndex] = l.text;
      if (l.newIndex !== null) newLines[l.newIndex] = l.text;
    }
  }
  return { old: oldLines.join('\n'), new: newLines.join('\n') };
}

/** A row of the unified view: a line, a fold of unchanged lines (expandable), or a gap of
 * lines the diff does not carry. */
export type DiffRow =
  | { type: 'line'; line: DiffLine }
  | { type: 'fold'; id: string; lines: DiffLine[] }
  | { type: 'gap'; hidden: number; header: string };

/** Lines of context kept around a change when unchanged runs are folded. */
export const FOLD_CONTEXT = 3;
/** Runs that would hide fewer lines than this stay open. */
const FOLD_MIN = 4;

/** The rows of a diff with long unchanged runs folded, except the folds in `expanded`. */
export function diffRows(diff: FileDiff, expanded: ReadonlySet<string> = new Set(), context = FOLD_CONTEXT): DiffRow[] {
  const rows: DiffRow[] = [];
  diff.hunks.forEach((hunk, h) => {
    if (hunk.hiddenBefore > 0 || (h > 0 && hunk.header)) rows.push({ type: 'gap', hidden: hunk.hiddenBefore, header: hunk.header });
    const lines = hunk.lines;
    let i = 0;
    while (i < lines.length) {
      if (lines[i].kind !== 'context') {
        rows.push({ type: 'line', line: lines[i++] });
        continue;
      }
      let j = i;
      while (j < lines.length && lines[j].kind === 'context') j++;
      const keepBefore = i === 0 ? 0 : context;
      const keepAfter = j === lines.length ? 0 : context;
      const id = `${h}:${i}`;
      if (j - i - keepBefore - keepAfter >= FOLD_MIN && !expanded.has(id)) {
        for (let k = i; k < i + keepBefore; k++) rows.push({ type: 'line', line: lines[k] });
        rows.push({ type: 'fold', id, lines: lines.slice(i + keepBefore, j - keepAfter) });
        for (let k = j - keepAfter; k < j; k++) rows.push({ type: 'line', line: lines[k] });
      } else {
        for (let k = i; k < j; k++) rows.push({ type: 'line', line: lines[k] });
      }
      i = j;
    }
  });
  return rows;
}

/** A row of the split view: old line on the left, new line on the right. */
export type SplitRow =
  | { type: 'pair'; left: DiffLine | null; right: DiffLine | null }
  | { type: 'fold'; id: string; lines: DiffLine[] }
  | { type: 'gap'; hidden: number; header: string };

/** The unified rows paired for the split view: a run of removed lines and the added lines
 * that follow it share rows; unchanged lines sit on both sides. */
export function splitRows(rows: readonly DiffRow[]): SplitRow[] {
  const out: SplitRow[] = [];
  let i = 0;
  while (i < rows.length) {
    const row = rows[i];
    if (row.type !== 'line') {
      out.push(row);
      i++;
      continue;
    }
    if (row.line.kind === 'context') {
      out.push({ type: 'pair', left: row.line, right: row.line });
      i++;
      continue;
    }
    const dels: DiffLine[] = [];
    const adds: DiffLine[] = [];
    while (i < rows.length) {
      const r = rows[i];
      if (r.type !== 'line' || r.line.kind !== 'del') break;
      dels.push(r.line);
      i++;
    }
    while (i < rows.length) {
      const r = rows[i];
      if (r.type !== 'line' || r.line.kind !== 'add') break;
      adds.push(r.line);
      i++;
    }
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) out.push({ type: 'pair', left: dels[k] ?? null, right: adds[k] ?? null });
  }
  return out;
}
