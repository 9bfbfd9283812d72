// Reading a unified diff (one file's `git diff` or OpenCode snapshot patch, or several of them
// one after the other) into the lines the Changes tab shows: file headers dropped, hunk
// headers kept as separators, each line with its old and new line numbers.

/** One line of a patch as shown. */
export type PatchLine = {
  kind: 'hunk' | 'add' | 'del' | 'context' | 'note';
  text: string;
  oldLine?: number;
  newLine?: number;
};

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** The lines of a unified diff. Hunks are read by their line counts, so a removed line that
 * starts with `--` stays a removed line; outside hunks only hunk headers count (file headers
 * and anything else between them are dropped). */
export function parsePatch(patch: string): PatchLine[] {
  const lines: PatchLine[] = [];
  let oldLine = 0;
  let newLine = 0;
  let oldLeft = 0;
  let newLeft = 0;
  const raw = patch.split('\n');
  if (raw.length > 0 && raw[raw.length - 1] === '') raw.pop();
  for (const line of raw) {
    if (oldLeft <= 0 && newLeft <= 0) {
      const hunk = HUNK.exec(line);
      if (hunk) {
        oldLine = Number(hunk[1]);
        oldLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
        newLine = Number(hunk[3]);
        newLeft = hunk[4] === undefined ? 1 : Number(hunk[4]);
        lines.push({ kind: 'hunk', text: line });
      } else if (line.startsWith('\\')) {
        lines.push({ kind: 'note', text: line.slice(1).trim() });
      }
      continue;
    }
    if (line.startsWith('+')) {
      lines.push({ kind: 'add', text: line.slice(1), newLine: newLine++ });
      newLeft--;
    } else if (line.startsWith('-')) {
      lines.push({ kind: 'del', text: line.slice(1), oldLine: oldLine++ });
      oldLeft--;
    } else if (line.startsWith('\\')) {
      lines.push({ kind: 'note', text: line.slice(1).trim() });
    } else {
      lines.push({ kind: 'context', text: line.slice(1), oldLine: oldLine++, newLine: newLine++ });
      oldLeft--;
      newLeft--;
    }
  }
  return lines;
}
