import { describe, expect, it } from 'vitest';
import { baseName, reviewMarkdown, rowId, seconds } from '$lib/reviews';

const REPLY = [
  'P1 FAIL — "Increments": no files named.',
  '- **P2 PASS** — one Status line per increment.',
  '3. P4 FAIL — no concurrency test.',
  'P5 PASS — looked for a FAIL-safe default: present.',
  'Some prose that mentions FAIL.',
  'VERDICT: FLAGS (2)',
].join('\n');

describe('reviews', () => {
  it('puts each plain check line in its own paragraph and leaves list items alone', () => {
    expect(reviewMarkdown('P1 PASS\nP2 FAIL — x\nVERDICT: FLAGS (1)')).toBe('P1 PASS\n\nP2 FAIL — x\n\nVERDICT: FLAGS (1)');
    expect(reviewMarkdown('- P1 PASS\n- P2 PASS')).toBe('- P1 PASS\n- P2 PASS');
    expect(reviewMarkdown('Intro\r\nP1 PASS')).toBe('Intro\n\nP1 PASS');
  });

  it('formats ids, names and durations', () => {
    expect(rowId({ kind: 'commit', key: 'abc' })).toBe('commit:abc');
    expect(baseName('/a/b/plan.md')).toBe('plan.md');
    expect(baseName('/a/b/')).toBe('b');
    expect(baseName('plan.md')).toBe('plan.md');
    expect(seconds(8312)).toBe('8.3');
    expect(seconds(40)).toBe('0.0');
  });
});
