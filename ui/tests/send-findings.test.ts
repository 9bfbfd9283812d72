// "Send selected findings" on a reviewer turn: the button shows only for a recorded reply with
// open findings, the picker checks blockers and majors, Send sends exactly the checked ids, a
// reply sent before asks first, a refusal keeps the dialog and its choice, and Cancel keeps the
// choice for the next time without sending.
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

const invoke = vi.fn();
vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return { ...actual, invoke: (...args: unknown[]) => invoke(...args) };
});

const { default: TurnItem } = await import('$lib/components/chat/TurnItem.svelte');
const { store } = await import('$lib/state/store.svelte');
const { MessageView } = await import('$lib/state/transcript.svelte');
const { toasts } = await import('$lib/state/toasts.svelte');
const { HostError } = await import('$lib/host');

type FindingsView = import('$lib/types/FindingsView').FindingsView;
type FindingView = import('$lib/types/FindingView').FindingView;

beforeAll(() => {
  // jsdom has <dialog> without the modal methods.
  const proto = HTMLDialogElement.prototype as HTMLDialogElement & { showModal: () => void; close: () => void };
  proto.showModal ??= function (this: HTMLDialogElement) {
    this.setAttribute('open', '');
  };
  proto.close ??= function (this: HTMLDialogElement) {
    this.removeAttribute('open');
  };
});

function finding(id: string, severity: FindingView['severity']): FindingView {
  return {
    id,
    severity,
    title: `title of ${id}`,
    status: 'open',
    firstRound: 1,
    messageId: 'msg_r1',
    claimedUnchanged: false,
    history: [{ round: 1, side: 'reviewer', status: 'open', claimedUnchanged: false, messageId: 'msg_r1' }],
  };
}

const view: FindingsView = {
  reviewSessionId: 'ses_review',
  originalSessionId: 'ses_impl',
  rounds: [{ round: 1, messageId: 'msg_r1', at: 1 }],
  findings: [finding('F1', 'blocker'), finding('F2', 'major'), finding('F3', 'minor'), finding('F4', 'nit')],
};

function turn(id = 'msg_r1') {
  const m = new MessageView({ id, sessionID: 'ses_review', role: 'assistant', time: { created: 1, completed: 2 } }, [
    { id: 'prt_1', sessionID: 'ses_review', messageID: id, type: 'text', text: 'FINDINGS ...', synthetic: false, ignored: false },
  ]);
  return { kind: 'turn' as const, key: m.id, steps: [m], prompt: undefined };
}

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  invoke.mockReset();
  toasts.clear();
  store.findings.clear();
  store.transfers.clear();
});

function render(id = 'msg_r1') {
  const target = document.createElement('div');
  document.body.appendChild(target);
  app = mount(TurnItem, { target, props: { turn: turn(id), transferDirection: 'toImplementer' } });
  flushSync();
  return target;
}

const dialog = () => document.querySelector('[data-testid="send-findings-dialog"]');
const checks = () =>
  [...document.querySelectorAll<HTMLElement>('[data-testid="send-finding"]')].map(
    (l) => `${l.dataset.findingId}:${l.querySelector<HTMLInputElement>('input')!.checked}`,
  );
const box = (id: string) => document.querySelector<HTMLInputElement>(`[data-testid="send-finding"][data-finding-id="${id}"] input`)!;
const toggle = (id: string) => {
  box(id).click();
  flushSync();
};

describe('Send selected findings', () => {
  it('shows only on a recorded reviewer reply with open findings', () => {
    let el = render('msg_other');
    store.findings.set('ses_review', view);
    flushSync();
    expect(el.querySelector('[data-testid="send-findings-button"]')).toBeNull();
    unmount(app!);
    el = render();
    expect(el.querySelector('[data-testid="send-findings-button"]')).not.toBeNull();
  });

  it('checks blockers and majors, and sends exactly the checked findings', async () => {
    store.findings.set('ses_review', view);
    const el = render();
    el.querySelector<HTMLButtonElement>('[data-testid="send-findings-button"]')!.click();
    flushSync();
    expect(checks()).toEqual(['F1:true', 'F2:true', 'F3:false', 'F4:false']);
    toggle('F1');
    toggle('F4');
    invoke.mockResolvedValue({ targetSessionId: 'ses_impl', direction: 'toImplementer', messageId: 'msg_sent' });
    document.querySelector<HTMLButtonElement>('[data-testid="send-findings-send"]')!.click();
    await vi.waitFor(() => expect(dialog()).toBeNull());
    expect(invoke).toHaveBeenCalledExactlyOnceWith({ cmd: 'sendFindings', reviewSessionId: 'ses_review', messageId: 'msg_r1', findingIds: ['F2', 'F4'] });
    expect(toasts.items.map((t) => t.level)).toEqual(['success']);
  });

  it('cannot send nothing', () => {
    store.findings.set('ses_review', view);
    const el = render();
    el.querySelector<HTMLButtonElement>('[data-testid="send-findings-button"]')!.click();
    flushSync();
    toggle('F1');
    toggle('F2');
    expect(document.querySelector<HTMLButtonElement>('[data-testid="send-findings-send"]')!.disabled).toBe(true);
    expect(invoke).not.toHaveBeenCalled();
  });

  it('Cancel sends nothing and keeps the choice for the next opening', () => {
    store.findings.set('ses_review', view);
    const el = render();
    el.querySelector<HTMLButtonElement>('[data-testid="send-findings-button"]')!.click();
    flushSync();
    toggle('F3');
    document.querySelector<HTMLButtonElement>('[data-testid="send-findings-cancel"]')!.click();
    flushSync();
    expect(dialog()).toBeNull();
    expect(invoke).not.toHaveBeenCalled();
    el.querySelector<HTMLButtonElement>('[data-testid="send-findings-button"]')!.click();
    flushSync();
    expect(checks()).toEqual(['F1:true', 'F2:true', 'F3:true', 'F4:false']);
  });

  it('a refusal is a toast and keeps the dialog with its choice', async () => {
    store.findings.set('ses_review', view);
    const el = render();
    el.querySelector<HTMLButtonElement>('[data-testid="send-findings-button"]')!.click();
    flushSync();
    invoke.mockRejectedValue(new HostError('unknown_findings', 'not among this reply’s findings: F2'));
    document.querySelector<HTMLButtonElement>('[data-testid="send-findings-send"]')!.click();
    await vi.waitFor(() => expect(toasts.items.map((t) => t.level)).toEqual(['error']));
    expect(toasts.items[0].text).toMatch(/not among this reply’s findings/);
    expect(toasts.items[0].detail).toContain('F2');
    expect(dialog()).not.toBeNull();
    expect(checks()).toEqual(['F1:true', 'F2:true', 'F3:false', 'F4:false']);
  });

  it('a reply sent before asks first, and sends again with the yes only', async () => {
    store.findings.set('ses_review', view);
    store.recordTransfer({
      sourceSessionId: 'ses_review',
      sourceMessageId: 'msg_r1',
      targetSessionId: 'ses_impl',
      direction: 'toImplementer',
      sentMessageId: 'msg_sent1',
      sentAt: 5,
      pending: false,
    });
    const el = render();
    el.querySelector<HTMLButtonElement>('[data-testid="send-findings-button"]')!.click();
    flushSync();
    document.querySelector<HTMLButtonElement>('[data-testid="send-findings-send"]')!.click();
    flushSync();
    expect(invoke).not.toHaveBeenCalled();
    const confirm = document.querySelector('[data-testid="confirm-dialog"]');
    expect(confirm?.textContent).toContain('already sent');
    invoke.mockResolvedValue({ targetSessionId: 'ses_impl', direction: 'toImplementer', messageId: 'msg_sent2' });
    document.querySelector<HTMLButtonElement>('[data-testid="confirm-dialog"] [data-testid="confirm"]')!.click();
    await vi.waitFor(() => expect(dialog()).toBeNull());
    expect(invoke).toHaveBeenCalledExactlyOnceWith({
      cmd: 'sendFindings',
      reviewSessionId: 'ses_review',
      messageId: 'msg_r1',
      findingIds: ['F1', 'F2'],
      resend: true,
    });
  });
});
