// Loading a link's findings while its pushes arrive: a push that lands while the load is on its
// way is newer than the load's answer and must survive it (the list once stayed empty when the
// backend recorded a reply between the list's request and its answer).
import { describe, expect, it, vi } from 'vitest';

const invoke = vi.fn();
vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return { ...actual, invoke: (...args: unknown[]) => invoke(...args) };
});

const { store } = await import('$lib/state/store.svelte');
const { loadFindings } = await import('$lib/state/actions/findings');

type FindingsView = import('$lib/types/FindingsView').FindingsView;

function view(reviewSessionId: string, ids: string[]): FindingsView {
  return {
    reviewSessionId,
    originalSessionId: 'ses_impl',
    rounds: ids.length ? [{ round: 1, messageId: 'msg_r1', at: 1 }] : [],
    findings: ids.map((id) => ({
      id,
      severity: 'major',
      title: `title of ${id}`,
      status: 'open',
      firstRound: 1,
      messageId: 'msg_r1',
      claimedUnchanged: false,
      history: [{ round: 1, side: 'reviewer', status: 'open', claimedUnchanged: false, messageId: 'msg_r1' }],
    })),
  } as FindingsView;
}

function push(v: FindingsView): void {
  store.enqueue([{ seq: 1, change: { type: 'findings', findings: v } } as never]);
  store.flush();
}

describe('loading findings', () => {
  it('keeps a push that arrived while the load was on its way', async () => {
    let answer!: (v: FindingsView) => void;
    invoke.mockImplementationOnce(() => new Promise((resolve) => (answer = resolve)));
    const loading = loadFindings('ses_a');
    push(view('ses_a', ['F1', 'F2', 'F3']));
    answer(view('ses_a', []));
    await loading;
    expect(store.findings.get('ses_a')?.findings.map((f) => f.id)).toEqual(['F1', 'F2', 'F3']);
  });

  it('takes the answer when no push came meanwhile, even after earlier pushes', async () => {
    push(view('ses_b', ['F1']));
    invoke.mockResolvedValueOnce(view('ses_b', ['F1', 'F2']));
    await loadFindings('ses_b');
    expect(store.findings.get('ses_b')?.findings.map((f) => f.id)).toEqual(['F1', 'F2']);
  });

  it("is not held back by another link's push", async () => {
    let answer!: (v: FindingsView) => void;
    invoke.mockImplementationOnce(() => new Promise((resolve) => (answer = resolve)));
    const loading = loadFindings('ses_c');
    push(view('ses_other', ['F9']));
    answer(view('ses_c', ['F1']));
    await loading;
    expect(store.findings.get('ses_c')?.findings.map((f) => f.id)).toEqual(['F1']);
  });
});
