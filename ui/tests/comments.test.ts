import { describe, expect, it } from 'vitest';
import { budgetOf, commentedLine, draftsOf, formOf, formatCost, loopTotals, pathInFolder, quoteOf, rangeOf } from '$lib/comments';
import { parseUnifiedPatch } from '$lib/diff';
import type { LineComment } from '$lib/types/LineComment';
import type { LoopState } from '$lib/types/LoopState';

const PATCH = `diff --git a/src/lib.rs b/src/lib.rs
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,3 +1,4 @@
 fn a() {}
-fn b() {}
+fn b() { 1 }
+fn c() {}
 fn d() {}
@@ -10,2 +11,2 @@
 fn x() {}
-fn y() {}
+fn z() {}
`;

function comment(status: LineComment['status'], start: number, end: number): LineComment {
  return { id: `cmt_${start}`, sessionId: 'ses_1', path: 'src/lib.rs', startLine: start, endLine: end, quote: '', body: 'b', status, createdAt: 1, updatedAt: 1 };
}

describe('line comments', () => {
  it('quotes the new side of a picked range, in either direction, and refuses a range across a gap', () => {
    const [file] = parseUnifiedPatch(PATCH);
    expect(rangeOf(3, 2)).toEqual({ start: 2, end: 3 });
    expect(quoteOf(file, rangeOf(3, 2))).toBe('fn b() { 1 }\nfn c() {}');
    expect(quoteOf(file, { start: 4, end: 4 })).toBe('fn d() {}');
    expect(quoteOf(file, { start: 4, end: 11 })).toBeNull();
  });

  it('keeps the drafts apart and marks the lines of live comments only', () => {
    const list = [comment('draft', 2, 3), comment('addressed', 5, 5), comment('open', 8, 8)];
    expect(draftsOf(list).map((c) => c.id)).toEqual(['cmt_2']);
    expect(commentedLine(list, 'src/lib.rs', 3)).toBe(true);
    expect(commentedLine(list, 'src/lib.rs', 5)).toBe(false);
    expect(commentedLine(list, 'src/other.rs', 8)).toBe(false);
    expect(pathInFolder('/p/src/lib.rs', '/p')).toBe('src/lib.rs');
    expect(pathInFolder('/q/lib.rs', '/p')).toBe('/q/lib.rs');
  });
});

describe('loop cost', () => {
  it('adds up the rounds and reads a budget form', () => {
    const loop = {
      startedAt: 1_000,
      ended: true,
      stop: { reason: 'budget', detail: '', findingIds: [], at: 61_000 },
      costs: [
        { round: 1, tokens: 1200, costMicros: 1500, ms: 20_000 },
        { round: 2, tokens: 800, costMicros: 500, ms: 30_000 },
      ],
    } as unknown as LoopState;
    expect(loopTotals(loop, 999_999)).toEqual({ tokens: 2000, cost: 0.002, ms: 60_000 });
    expect(formatCost(0.002)).toBe('$0.0020');
    expect(formatCost(12.5)).toBe('$12.50');
    expect(budgetOf({ tokens: '50000', dollars: 0.5, minutes: '' })).toEqual({ tokens: 50000, costMicros: 500_000 });
    expect(budgetOf({ tokens: '-1', dollars: null, minutes: 'x' })).toEqual({});
    expect(formOf({ costMicros: 250_000, minutes: 30 })).toEqual({ tokens: '', dollars: '0.25', minutes: '30' });
  });
});
