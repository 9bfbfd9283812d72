// The Findings list's logic: filters by status and severity, counts, the history grouped by
// round with the "claimed fixed, code unchanged" mark, and what a reviewer turn's picker
// offers with blockers and majors checked by default.
import { describe, expect, it } from 'vitest';
import {
  countBySeverity,
  countByStatus,
  coverageWords,
  defaultSelection,
  filterFindings,
  historyByRound,
  messageFindings,
  notClosedCount,
  roundMessageOf,
  unchangedWords,
} from '$lib/findings';
import type { FindingRound } from '$lib/types/FindingRound';
import type { FindingView } from '$lib/types/FindingView';
import type { FindingsView } from '$lib/types/FindingsView';

function round(over: Partial<FindingRound>): FindingRound {
  return { round: 1, side: 'reviewer', status: 'open', claimedUnchanged: false, messageId: 'msg_r1', ...over };
}

function finding(over: Partial<FindingView>): FindingView {
  return {
    id: 'F1',
    severity: 'major',
    title: 'a title',
    status: 'open',
    firstRound: 1,
    messageId: 'msg_r1',
    claimedUnchanged: false,
    history: [round({})],
    ...over,
  };
}

// Round 1 opened F1 (blocker), F2 (major), F3 (nit); the implementer fixed F1 without changing
// the code and disputed F2; round 2 kept F2 open, called F1 fixed and opened F4 (minor).
const view: FindingsView = {
  reviewSessionId: 'ses_rev',
  originalSessionId: 'ses_impl',
  rounds: [
    { round: 1, messageId: 'msg_r1', at: 1 },
    { round: 2, messageId: 'msg_r2', at: 2 },
  ],
  findings: [
    finding({
      id: 'F1',
      severity: 'blocker',
      status: 'fixed',
      history: [
        round({}),
        round({ side: 'implementer', status: 'claimedFixed', claimedUnchanged: true, messageId: 'msg_i1' }),
        round({ round: 2, status: 'fixed', messageId: 'msg_r2' }),
      ],
    }),
    finding({
      id: 'F2',
      severity: 'major',
      status: 'open',
      history: [
        round({}),
        round({ side: 'implementer', status: 'disputed', note: 'by design', messageId: 'msg_i1' }),
        round({ round: 2, status: 'open', note: 'still wrong', messageId: 'msg_r2' }),
      ],
    }),
    finding({ id: 'F3', severity: 'nit', status: 'open' }),
    finding({ id: 'F4', severity: 'minor', status: 'open', firstRound: 2, messageId: 'msg_r2', history: [round({ round: 2, messageId: 'msg_r2' })] }),
  ],
};

describe('filterFindings', () => {
  it('keeps everything with both filters on all, in order', () => {
    expect(filterFindings(view.findings, 'all', 'all').map((f) => f.id)).toEqual(['F1', 'F2', 'F3', 'F4']);
  });
  it('filters by status', () => {
    expect(filterFindings(view.findings, 'open', 'all').map((f) => f.id)).toEqual(['F2', 'F3', 'F4']);
    expect(filterFindings(view.findings, 'fixed', 'all').map((f) => f.id)).toEqual(['F1']);
    expect(filterFindings(view.findings, 'withdrawn', 'all')).toEqual([]);
  });
  it('filters by severity, and by both at once', () => {
    expect(filterFindings(view.findings, 'all', 'nit').map((f) => f.id)).toEqual(['F3']);
    expect(filterFindings(view.findings, 'open', 'blocker')).toEqual([]);
    expect(filterFindings(view.findings, 'fixed', 'blocker').map((f) => f.id)).toEqual(['F1']);
  });
});

describe('counts', () => {
  it('counts every status and severity, zero included', () => {
    expect(countByStatus(view.findings)).toEqual({ open: 3, disputed: 0, claimedFixed: 0, fixed: 1, withdrawn: 0 });
    expect(countBySeverity(view.findings)).toEqual({ blocker: 1, major: 1, minor: 1, nit: 1 });
    expect(countByStatus([])).toEqual({ open: 0, disputed: 0, claimedFixed: 0, fixed: 0, withdrawn: 0 });
  });
  it('counts a claimed fix as not closed until the reviewer confirms it', () => {
    const claimed = [
      finding({ id: 'F1', status: 'claimedFixed' }),
      finding({ id: 'F2', status: 'fixed' }),
      finding({ id: 'F3', status: 'withdrawn' }),
      finding({ id: 'F4', status: 'open', severity: 'nit' }),
    ];
    expect(notClosedCount(claimed)).toBe(2);
    expect(countByStatus(claimed).claimedFixed).toBe(1);
    expect(filterFindings(claimed, 'claimedFixed', 'all').map((f) => f.id)).toEqual(['F1']);
  });
});

describe('historyByRound', () => {
  it('puts both sides of a round together and carries the unchanged-code mark', () => {
    const rounds = historyByRound(view.findings[0].history);
    expect(rounds.map((r) => [r.round, r.reviewer?.status, r.implementer?.status, r.claimedUnchanged])).toEqual([
      [1, 'open', 'claimedFixed', true],
      [2, 'fixed', undefined, false],
    ]);
  });
  it('keeps the notes of a dispute and its answer', () => {
    const rounds = historyByRound(view.findings[1].history);
    expect(rounds[0].implementer?.note).toBe('by design');
    expect(rounds[1].reviewer?.note).toBe('still wrong');
  });
  it('carries the lines a claimed fix left unchanged, per finding', () => {
    const lines = { path: 'src/greet.rs', firstLine: 8, lastLine: 14 };
    const rounds = historyByRound([
      round({}),
      round({ side: 'implementer', status: 'claimedFixed', claimedUnchanged: true, unchangedLines: lines }),
    ]);
    expect(rounds[0].unchangedLines).toEqual(lines);
    expect(unchangedWords(rounds[0].unchangedLines)).toBe('Claimed fixed, but lines 8-14 of src/greet.rs are unchanged');
    expect(unchangedWords({ ...lines, nowFirstLine: 10 })).toBe(
      'Claimed fixed, but lines 8-14 of src/greet.rs are unchanged (now lines 10-16)',
    );
    expect(unchangedWords(undefined)).toBe('Claimed fixed, code unchanged');
  });
  it('sorts rounds that arrive out of order', () => {
    const rounds = historyByRound([round({ round: 3 }), round({ round: 1 })]);
    expect(rounds.map((r) => r.round)).toEqual([1, 3]);
  });
});

describe('the picker of a reviewer turn', () => {
  it('finds the recorded reply among the turn steps', () => {
    expect(roundMessageOf(view, ['msg_step', 'msg_r2'])).toBe('msg_r2');
    expect(roundMessageOf(view, ['msg_other'])).toBeUndefined();
    expect(roundMessageOf(undefined, ['msg_r1'])).toBeUndefined();
  });
  it('offers what that reply opened or kept open, not what it closed', () => {
    expect(messageFindings(view, 'msg_r1').map((f) => f.id)).toEqual(['F1', 'F2', 'F3']);
    expect(messageFindings(view, 'msg_r2').map((f) => f.id)).toEqual(['F2', 'F4']);
    expect(messageFindings(view, 'msg_none')).toEqual([]);
    expect(messageFindings(view, undefined)).toEqual([]);
  });
  it('checks blockers and majors by default, not minors or nits', () => {
    expect([...defaultSelection(messageFindings(view, 'msg_r1'))]).toEqual(['F1', 'F2']);
    expect([...defaultSelection(messageFindings(view, 'msg_r2'))]).toEqual(['F2']);
    expect(defaultSelection([finding({ id: 'F9', severity: 'nit' })]).size).toBe(0);
  });
});

describe('coverageWords', () => {
  it('says how many changed files a round covered, or that it named none', () => {
    const file = (path: string) => ({ path });
    expect(coverageWords({ reviewed: [file('a.rs'), file('b.rs')], changed: ['a.rs', 'b.rs', 'c.rs'], uncovered: ['c.rs'] })).toBe(
      'covered 2 of 3 changed files',
    );
    expect(coverageWords({ reviewed: [], changed: ['a.rs'], uncovered: ['a.rs'] })).toBe('named no file it reviewed');
    expect(coverageWords({ reviewed: [file('a.rs')], uncovered: [] })).toBe('reviewed 1 file(s) (changed files unknown)');
  });
});
