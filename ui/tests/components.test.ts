import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';

const invoke = vi.fn();
vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return { ...actual, invoke: (...args: unknown[]) => invoke(...args), copyText: vi.fn(async () => undefined) };
});

const { default: MessageItem } = await import('$lib/components/chat/MessageItem.svelte');
const { default: TurnItem } = await import('$lib/components/chat/TurnItem.svelte');
const { default: ReviewsPanel } = await import('$lib/components/review/ReviewsPanel.svelte');
const { store } = await import('$lib/state/store.svelte');
const { ui } = await import('$lib/state/ui.svelte');
const { MessageView } = await import('$lib/state/transcript.svelte');
const { toasts } = await import('$lib/state/toasts.svelte');
const { transferDirectionOf } = await import('$lib/sessions');
const { sessionTree } = await import('$lib/sidebarTree');
const { setLocale } = await import('$lib/i18n/index.svelte');

type Part = import('$lib/types/Part').Part;

function assistant(parts: Partial<Part>[]) {
  return new MessageView(
    { id: 'msg_1', sessionID: 'ses_review', role: 'assistant', time: { created: 1, completed: 2 } },
    parts.map((p, i) => ({ id: `prt_${i}`, sessionID: 'ses_review', messageID: 'msg_1', type: 'text', synthetic: false, ignored: false, ...p })),
  );
}

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  invoke.mockReset();
  toasts.clear();
});

function render(props: Record<string, unknown>) {
  const target = document.createElement('div');
  document.body.appendChild(target);
  // An assistant message is shown as a turn of one step.
  const message = props.message as InstanceType<typeof MessageView>;
  app =
    message.info.role === 'assistant'
      ? mount(TurnItem, { target, props: { ...props, turn: { kind: 'turn', key: message.id, steps: [message], prompt: undefined } } as never })
      : mount(MessageItem, { target, props: props as never });
  flushSync();
  return target;
}

type LedgerEntry = import('$lib/types/LedgerEntry').LedgerEntry;

function entry(over: Partial<LedgerEntry>): LedgerEntry {
  return {
    key: 'k1',
    kind: 'plan',
    source: 'message',
    cwd: '/home/dev/project',
    path: null,
    author: 'claude-sonnet-4-5',
    reviewer: 'claude-sonnet-4-5',
    status: 'flagged',
    outcome: 'flagged',
    verdict: 'FLAGS (1)',
    findings: 1,
    review: 'P1 FAIL — Increments: no files named.\nP2 PASS — status lines.\nVERDICT: FLAGS (1)',
    failedChecks: ['P1 FAIL — Increments: no files named.'],
    durationMs: 8312,
    attempts: 0,
    createdAt: Date.now() - 60_000,
    updatedAt: Date.now() - 60_000,
    sessionId: null,
    messageId: null,
    earlier: [],
    ...over,
  };
}

describe('MessageItem', () => {
  it('shows the server\'s words under a prompt whose turn failed up front', () => {
    setLocale('en');
    const prompt = new MessageView(
      { id: 'msg_u', sessionID: 'ses_a', role: 'user', time: { created: 1 } },
      [{ id: 'prt_u', sessionID: 'ses_a', messageID: 'msg_u', type: 'text', text: 'hello', synthetic: false, ignored: false }],
    );
    const target = render({ message: prompt, failure: { name: 'UnknownError', message: 'Model not found: fake/nope.' } });
    const shown = target.querySelector('[data-testid="session-error"]');
    expect(shown?.getAttribute('data-error-name')).toBe('UnknownError');
    expect(shown?.textContent).toContain('The reply failed');
    expect(shown?.textContent).toContain('Model not found: fake/nope.');
    unmount(app!);
    app = null;
    const plain = render({ message: prompt });
    expect(plain.querySelector('[data-testid="session-error"]')).toBeNull();
  });

  it("shows the handoff in a review session's first message as rendered markdown, a plain session's prompt as typed", () => {
    setLocale('en');
    const handoff = '## Handoff\n\n- **Changed** `greet()`\n<img src=x onerror=alert(1)>';
    const prompt = (sessionID: string) =>
      new MessageView({ id: 'msg_h', sessionID, role: 'user', time: { created: 1 } }, [
        { id: 'prt_h', sessionID, messageID: 'msg_h', type: 'text', text: handoff, synthetic: false, ignored: false },
      ]);
    store.sessions.set('ses_review', { id: 'ses_review', title: 'Review', directory: '/p', link: { kind: 'review', otherSessionId: 'ses_impl', otherExists: true } } as never);
    const el = render({ message: prompt('ses_review') });
    expect(el.querySelector('[data-testid="message-user"] h2')?.textContent).toBe('Handoff');
    expect(el.querySelector('[data-testid="message-user"] strong')?.textContent).toBe('Changed');
    expect(el.textContent).not.toContain('## Handoff');
    expect(el.querySelector('img[onerror]')).toBeNull();
    unmount(app!);
    app = null;
    const plain = render({ message: prompt('ses_plain') });
    expect(plain.textContent).toContain('## Handoff');
    store.sessions.delete('ses_review');
  });

  it('renders assistant markdown without synthetic parts, with copy and transfer buttons', () => {
    setLocale('en');
    const el = render({ message: assistant([{ text: '**Findings**' }, { text: 'secret routing', synthetic: true }]), transferDirection: 'toImplementer' });
    const article = el.querySelector('[data-testid="message-assistant"]')!;
    expect(article.getAttribute('data-message-id')).toBe('msg_1');
    expect(article.querySelector('strong')?.textContent).toBe('Findings');
    expect(article.textContent).not.toContain('secret routing');
    const button = el.querySelector('[data-testid="transfer-button"]')!;
    expect(button.getAttribute('aria-label')).toBe('Send review feedback to implementing agent');
    expect(el.querySelector('[data-testid="copy-message"]')).not.toBeNull();
  });

  it('has no transfer button without a link or without visible text', () => {
    expect(render({ message: assistant([{ text: 'hello' }]), transferDirection: null }).querySelector('[data-testid="transfer-button"]')).toBeNull();
    document.body.innerHTML = '';
    const onlySynthetic = render({ message: assistant([{ text: 'hidden', synthetic: true }]), transferDirection: 'toReviewer' });
    expect(onlySynthetic.querySelector('[data-testid="transfer-button"]')).toBeNull();
  });

  it('transfers on click, with a spinner while sending and a success toast', async () => {
    let resolve: (v: unknown) => void = () => undefined;
    invoke.mockImplementation(() => new Promise((r) => (resolve = r)));
    const el = render({ message: assistant([{ text: 'response' }]), transferDirection: 'toReviewer' });
    const button = el.querySelector<HTMLButtonElement>('[data-testid="transfer-button"]')!;
    button.click();
    flushSync();
    expect(invoke).toHaveBeenCalledWith({ cmd: 'transfer', sessionId: 'ses_review', messageId: 'msg_1' });
    expect(button.disabled).toBe(true);
    expect(button.getAttribute('aria-busy')).toBe('true');
    resolve({ targetSessionId: 'ses_impl', direction: 'toReviewer', messageId: 'msg_2' });
    await vi.waitFor(() => expect(button.disabled).toBe(false));
    expect(toasts.items.map((t) => t.level)).toEqual(['success']);
  });

  it('shows a failed transfer as an error toast', async () => {
    invoke.mockRejectedValue({ code: 'no_linked_session', message: 'no link' });
    const el = render({ message: assistant([{ text: 'response' }]), transferDirection: 'toImplementer' });
    el.querySelector<HTMLButtonElement>('[data-testid="transfer-button"]')!.click();
    await vi.waitFor(() => expect(toasts.items).toHaveLength(1));
    expect(toasts.items[0]).toMatchObject({ level: 'error', text: 'This session has no linked session.', detail: 'no link' });
  });

  it('shows an assistant error', () => {
    const message = new MessageView({
      id: 'msg_e',
      sessionID: 's',
      role: 'assistant',
      time: { created: 1 },
      error: { name: 'ProviderAuthError', data: { message: 'bad key' } },
    });
    expect(render({ message }).querySelector('[data-testid="assistant-error"]')?.textContent).toContain('ProviderAuthError: bad key');
  });
});

describe('sessions', () => {
  const base = { slug: '', projectID: '', title: 't', time: { created: 0, updated: 0 } };
  it('derives the transfer direction from the link the backend resolved', () => {
    expect(transferDirectionOf({ ...base, id: 'r', directory: '/a', link: { kind: 'review', otherSessionId: 'o', otherExists: true } })).toBe('toImplementer');
    expect(transferDirectionOf({ ...base, id: 'o', directory: '/a', link: { kind: 'original', otherSessionId: 'r', otherExists: true } })).toBe('toReviewer');
    expect(transferDirectionOf({ ...base, id: 'x', directory: '/a', metadata: { openchamber: { kind: 'review', originalSessionID: 'o' } } })).toBeNull();
    expect(transferDirectionOf({ ...base, id: 'y', directory: '/a' })).toBeNull();
  });

  it('groups by directory, newest first, hides archived and subagent sessions, filters by title', () => {
    const sessions = [
      { ...base, id: 'a', directory: '/p/one', title: 'Alpha', time: { created: 0, updated: 10 } },
      { ...base, id: 'b', directory: '/p/two', title: 'Beta', time: { created: 0, updated: 30 } },
      { ...base, id: 'c', directory: '/p/one', title: 'Gamma', time: { created: 0, updated: 20 } },
      { ...base, id: 'd', directory: '/p/one', title: 'Old', time: { created: 0, updated: 40, archived: 41 } },
      { ...base, id: 'e', directory: '/p/one', title: 'Child', parentID: 'a', time: { created: 0, updated: 50 } },
    ];
    const ids = (g: { rows: { session: { id: string } }[] }) => g.rows.map((r) => r.session.id);
    const groups = sessionTree(sessions, {});
    expect(groups.map((g) => [g.name, ids(g)])).toEqual([
      ['two', ['b']],
      ['one', ['c', 'a']],
    ]);
    expect(ids(sessionTree(sessions, { showArchived: true })[0])).toEqual(['d', 'c', 'a']);
    expect(sessionTree(sessions, { query: 'gam' }).flatMap(ids)).toEqual(['c']);
  });
});

describe('cold review button', () => {
  it('reviews the message on click, with a spinner while it runs', async () => {
    setLocale('en');
    invoke.mockResolvedValue({
      id: 'rvw_1', sessionId: 'ses_review', status: 'running', kind: 'plan', key: 'k', source: 'message', messageId: 'msg_1', startedAt: 1,
    });
    const el = render({ message: assistant([{ text: '# Plan' }]), transferDirection: null });
    const button = el.querySelector<HTMLButtonElement>('[data-testid="cold-review-button"]')!;
    expect(button.getAttribute('aria-label')).toBe('Cold review');
    expect(button.title).toContain('P1–P8');
    button.click();
    flushSync();
    expect(invoke).toHaveBeenCalledWith({ cmd: 'coldReview', sessionId: 'ses_review', messageId: 'msg_1' });
    await vi.waitFor(() => expect(store.runningReviewOf('msg_1')?.id).toBe('rvw_1'));
    flushSync();
    expect(button.disabled).toBe(true);
    expect(button.getAttribute('aria-busy')).toBe('true');
    store.upsertReview({ ...store.reviews.get('rvw_1')!, status: 'done' });
    flushSync();
    expect(button.disabled).toBe(false);
  });

  it('is not offered without visible text', () => {
    const el = render({ message: assistant([{ text: 'hidden', synthetic: true }]), transferDirection: null });
    expect(el.querySelector('[data-testid="cold-review-button"]')).toBeNull();
  });
});

describe('ReviewsPanel', () => {
  function mountPanel() {
    const target = document.createElement('div');
    document.body.appendChild(target);
    app = mount(ReviewsPanel, { target });
    flushSync();
    return target;
  }

  it('explains the gates when the ledger is empty', async () => {
    setLocale('en');
    invoke.mockResolvedValue([]);
    const el = mountPanel();
    await vi.waitFor(() => expect(el.querySelector('[data-testid="reviews-empty"]')).not.toBeNull());
    expect(invoke).toHaveBeenCalledWith({ cmd: 'listReviews', limit: 200 });
    expect(el.textContent).toContain('crosscheck gate install claude|git|pi');
  });

  it('lists rows newest first with status, kind, source and duration, and shows draft and findings side by side', async () => {
    setLocale('en');
    const rows = [
      entry({ key: 'k2', status: 'pending', outcome: 'pending', verdict: null, findings: null, review: null, failedChecks: [], durationMs: null, updatedAt: Date.now() - 5000 }),
      entry({ key: 'k1' }),
      entry({ key: 'k3', kind: 'commit', source: 'staged', status: 'clean', outcome: 'clean', findings: 0, review: 'J1 PASS\nVERDICT: CLEAN', failedChecks: [] }),
      entry({ key: 'k4', source: 'parameter', status: 'unreviewed', outcome: 'auth', review: 'the reviewer refused the credentials (no API key: set ANTHROPIC_API_KEY)', failedChecks: [] }),
    ];
    invoke.mockImplementation(async (req: { cmd: string; key?: string }) => {
      if (req.cmd === 'listReviews') return rows;
      if (req.cmd === 'getReview') return { entry: rows.find((r) => r.key === req.key), text: '# The plan\n\n1. Do it.' };
      return null;
    });
    const el = mountPanel();
    await vi.waitFor(() => expect(el.querySelectorAll('[data-testid="review-row"]')).toHaveLength(4));
    const list = [...el.querySelectorAll<HTMLElement>('[data-testid="review-row"]')];
    expect(list.map((r) => r.dataset.status)).toEqual(['pending', 'flagged', 'clean', 'unreviewed']);
    expect(list[0].textContent).toContain('Reviewing');
    expect(list[1].textContent).toContain('Flagged (1)');
    expect(list[1].textContent).toContain('chat reply');
    expect(list[1].textContent).toContain('8.3 sec');
    expect(list[2].textContent).toContain('Commit');
    expect(list[2].textContent).toContain('staged changes');

    list[1].click();
    await vi.waitFor(() => expect(el.querySelector('[data-testid="review-draft"]')?.textContent).toBe('# The plan\n\n1. Do it.'));
    expect(invoke).toHaveBeenCalledWith({ cmd: 'getReview', kind: 'plan', key: 'k1' });
    const findings = el.querySelector('[data-testid="review-findings"]')!;
    expect([...findings.querySelectorAll('[data-testid="review-finding"]')].map((f) => f.textContent?.trim())).toEqual([
      'P1 FAIL — Increments: no files named.',
    ]);
    // The whole reply, one check per paragraph, through the sanitized markdown renderer.
    expect([...findings.querySelectorAll('.md p')].map((p) => p.textContent)).toEqual([
      'P1 FAIL — Increments: no files named.',
      'P2 PASS — status lines.',
      'VERDICT: FLAGS (1)',
    ]);

    el.querySelectorAll<HTMLElement>('[data-testid="review-row"]')[3].click();
    await vi.waitFor(() => expect(el.querySelector('[data-testid="review-detail"]')?.getAttribute('data-status')).toBe('unreviewed'));
    expect(el.querySelector('[data-testid="review-findings"] [role="alert"]')?.textContent).toContain('ANTHROPIC_API_KEY');
  });

  it('filters by folder and verdict, colours a commit diff, and opens and reviews again what it read', async () => {
    setLocale('en');
    const diff = 'diff --git a/src/a.rs b/src/a.rs\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,2 +1,2 @@\n fn a() {}\n-fn old() {}\n+fn new() {}\n';
    const rows = [
      entry({ key: 'c1', kind: 'commit', source: 'staged', cwd: '/home/dev/api', status: 'clean', outcome: 'clean', findings: 0, failedChecks: [] }),
      // Started from a session (the ledger keeps which), and reviewed twice before.
      entry({
        key: 'p1',
        cwd: '/home/dev/web',
        sessionId: 'ses_plan',
        messageId: 'msg_plan',
        earlier: [
          { status: 'clean', outcome: 'clean', verdict: 'CLEAN', findings: 0, reviewer: 'gpt-5', durationMs: 4100, sessionId: 'ses_plan', messageId: 'msg_plan', reviewedAt: Date.now() - 120_000 },
          { status: 'flagged', outcome: 'flagged', verdict: 'FLAGS (3)', findings: 3, reviewer: 'o3', durationMs: 9000, sessionId: null, messageId: null, reviewedAt: Date.now() - 7_200_000 },
        ],
      }),
      entry({ key: 'p2', cwd: '/home/dev/api', status: 'unreviewed', outcome: 'auth', failedChecks: [] }),
    ];
    store.sessions.set('ses_plan', { id: 'ses_plan', title: 'Plan the web app', directory: '/home/dev/web' } as never);
    invoke.mockImplementation(async (req: { cmd: string; key?: string }) => {
      if (req.cmd === 'listReviews') return rows;
      if (req.cmd === 'getReview') return { entry: rows.find((r) => r.key === req.key), text: req.key === 'c1' ? diff : '# Plan' };
      if (req.cmd === 'coldReview') return { id: 'rvw_again', sessionId: 'ses_plan', messageId: 'msg_plan', status: 'running', kind: 'plan', key: 'p1', source: 'message', startedAt: 2 };
      return null;
    });
    const el = mountPanel();
    await vi.waitFor(() => expect(el.querySelectorAll('[data-testid="review-row"]')).toHaveLength(3));
    const pick = (testid: string, value: string) => {
      const select = el.querySelector<HTMLSelectElement>(`[data-testid="${testid}"]`)!;
      select.value = value;
      select.dispatchEvent(new Event('change', { bubbles: true }));
      flushSync();
    };
    const keys = () => [...el.querySelectorAll<HTMLElement>('[data-testid="review-row"]')].map((r) => r.dataset.id);
    pick('reviews-folder', '/home/dev/api');
    expect(keys()).toEqual(['commit:c1', 'plan:p2']);
    pick('reviews-verdict', 'unreviewed');
    expect(keys()).toEqual(['plan:p2']);
    expect(el.querySelector('[data-testid="review-row"]')?.textContent).toContain('No reviewer ran');
    pick('reviews-verdict', 'flagged');
    expect(keys()).toEqual([]);
    expect(el.querySelector('[data-testid="reviews-filtered-empty"]')).not.toBeNull();
    pick('reviews-folder', '');
    pick('reviews-verdict', '');

    // A commit's staged diff shows through the diff view, with added and removed lines marked.
    el.querySelector<HTMLElement>('[data-testid="review-row"][data-id="commit:c1"]')!.click();
    await vi.waitFor(() => expect(el.querySelector('[data-testid="review-diff"] [data-testid="diff-view"]')).not.toBeNull());
    const kinds = [...el.querySelectorAll<HTMLElement>('[data-testid="review-diff"] [data-testid="diff-line"]')].map((l) => l.dataset.kind);
    expect(kinds).toContain('add');
    expect(kinds).toContain('del');
    // A gate's row came from no session here: nothing to open.
    expect(el.querySelector('[data-testid="review-open"]')).toBeNull();

    // A row reviewed before says how often; selected, it lists those reviews newest first.
    const p1 = () => el.querySelector<HTMLElement>('[data-testid="review-row"][data-id="plan:p1"]')!;
    expect(p1().querySelector('[data-testid="review-runs"]')?.textContent).toBe('2 earlier');
    expect(el.querySelector('[data-testid="review-history"]')).toBeNull();
    // A review started from a session opens its reply and runs again on it.
    p1().click();
    await vi.waitFor(() => expect(el.querySelector('[data-testid="review-open"]')).not.toBeNull());
    const earlier = [...el.querySelectorAll<HTMLElement>('[data-testid="review-history"] [data-testid="review-earlier"]')];
    expect(earlier.map((r) => r.dataset.status)).toEqual(['clean', 'flagged']);
    expect(earlier[0].textContent).toContain('gpt-5');
    expect(earlier[0].textContent).toContain('2 min. ago');
    expect(earlier[1].textContent).toContain('Flagged (3)');
    expect(earlier[1].textContent).toContain('o3');
    expect(earlier[1].textContent).toContain('9 sec');
    el.querySelector<HTMLElement>('[data-testid="review-open"]')!.click();
    expect(ui.selectedSessionId).toBe('ses_plan');
    expect(ui.revealRequest).toEqual({ sessionId: 'ses_plan', messageId: 'msg_plan' });
    el.querySelector<HTMLElement>('[data-testid="review-again"]')!.click();
    await vi.waitFor(() => expect(invoke).toHaveBeenCalledWith({ cmd: 'coldReview', sessionId: 'ses_plan', messageId: 'msg_plan' }));
    await vi.waitFor(() => expect(store.reviews.get('rvw_again')?.status).toBe('running'));
    ui.revealRequest = null;
    store.reviews.clear();
    store.sessions.delete('ses_plan');
  });

  it('loads once, then shows the rows the backend pushes without asking again', async () => {
    setLocale('en');
    invoke.mockResolvedValue([]);
    const el = mountPanel();
    await vi.waitFor(() => expect(invoke).toHaveBeenCalledTimes(1));
    invoke.mockClear();
    store.ledger = [entry({ key: 'pushed', status: 'pending', outcome: 'pending', review: null, failedChecks: [], updatedAt: Date.now() })];
    flushSync();
    await vi.waitFor(() => expect(el.querySelectorAll('[data-testid="review-row"]')).toHaveLength(1));
    store.ledger = [entry({ key: 'pushed' })];
    flushSync();
    await vi.waitFor(() => expect(el.querySelector<HTMLElement>('[data-testid="review-row"]')?.dataset.status).toBe('flagged'));
    // Focus, an in-app review and time passing ask nothing: the ledger is pushed.
    window.dispatchEvent(new Event('focus'));
    store.upsertReview({ id: 'rvw_x', sessionId: 's', status: 'done', kind: 'plan', key: 'kx', source: 'message', startedAt: 1 });
    flushSync();
    await new Promise((r) => setTimeout(r, 50));
    expect(invoke).not.toHaveBeenCalledWith({ cmd: 'listReviews', limit: 200 });
    store.ledger = null;
  });
});
