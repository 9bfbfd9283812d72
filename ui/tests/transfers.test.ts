// Transfers show their state: the sent mark with its time, a second send that asks first, a send
// another window made meanwhile, and an orphaned review session that offers to delete itself.
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

const invoke = vi.fn();
vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return { ...actual, invoke: (...args: unknown[]) => invoke(...args) };
});

const { default: TurnItem } = await import('$lib/components/chat/TurnItem.svelte');
const { default: ChatView } = await import('$lib/components/chat/ChatView.svelte');
const { store } = await import('$lib/state/store.svelte');
const { ui } = await import('$lib/state/ui.svelte');
const { MessageView } = await import('$lib/state/transcript.svelte');
const { toasts } = await import('$lib/state/toasts.svelte');
const { transferDirectionOf, isOrphanedReview } = await import('$lib/sessions');
const { markStreamOpen } = await import('$lib/state/actions/transcripts');

type TransferRecord = import('$lib/types/TransferRecord').TransferRecord;
type SessionView = import('$lib/types/SessionView').SessionView;

beforeAll(() => {
  // jsdom has <dialog> without the modal methods.
  const proto = HTMLDialogElement.prototype as HTMLDialogElement & { showModal: () => void; close: () => void };
  proto.showModal ??= function (this: HTMLDialogElement) {
    this.setAttribute('open', '');
  };
  proto.close ??= function (this: HTMLDialogElement) {
    this.removeAttribute('open');
  };
  markStreamOpen();
});

function reply(id = 'msg_1') {
  return new MessageView({ id, sessionID: 'ses_review', role: 'assistant', time: { created: 1, completed: 2 } }, [
    { id: 'prt_1', sessionID: 'ses_review', messageID: id, type: 'text', text: 'F1: empty passwords pass.', synthetic: false, ignored: false },
  ]);
}

/** One assistant message as the turn the chat shows it in. */
function turnOf(message: InstanceType<typeof MessageView>) {
  return { kind: 'turn' as const, key: message.id, steps: [message], prompt: undefined };
}

function record(over: Partial<TransferRecord> = {}): TransferRecord {
  return {
    sourceSessionId: 'ses_review',
    sourceMessageId: 'msg_1',
    targetSessionId: 'ses_impl',
    direction: 'toImplementer',
    sentMessageId: 'msg_sent1',
    sentAt: new Date(2026, 11, 1, 14, 5).getTime(),
    pending: false,
    ...over,
  };
}

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  invoke.mockReset();
  toasts.clear();
  store.transfers.clear();
  store.sessions.clear();
  ui.deleteSessionId = null;
});

function render(component: typeof TurnItem | typeof ChatView, props: Record<string, unknown>) {
  const target = document.createElement('div');
  document.body.appendChild(target);
  app = mount(component as never, { target, props: props as never });
  flushSync();
  return target;
}

describe('sent mark', () => {
  it('shows when and that a message was sent, once the backend pushes the transfer', () => {
    const el = render(TurnItem, { turn: turnOf(reply()), transferDirection: 'toImplementer' });
    expect(el.querySelector('[data-testid="transfer-sent"]')).toBeNull();
    store.enqueue([{ seq: 1, change: { type: 'transferred', transfer: record() } }]);
    store.flush();
    flushSync();
    const mark = el.querySelector('[data-testid="transfer-sent"]');
    expect(mark?.textContent?.trim()).toMatch(/^Sent .*\d/);
    expect(mark?.getAttribute('data-sent-at')).toBe(String(record().sentAt));
    expect(el.querySelector('[data-testid="transfer-button"]')?.getAttribute('data-sent')).toBe('true');
  });

  it('shows a send OpenCode has not accepted yet as sending, then sent; a dropped one goes away', () => {
    const el = render(TurnItem, { turn: turnOf(reply()), transferDirection: 'toImplementer' });
    store.enqueue([{ seq: 101, change: { type: 'transferred', transfer: record({ pending: true }) } }]);
    store.flush();
    flushSync();
    const mark = () => el.querySelector('[data-testid="transfer-sent"]');
    expect(mark()?.getAttribute('data-pending')).toBe('true');
    expect(mark()?.textContent?.trim()).toBe('Sending…');
    store.enqueue([{ seq: 102, change: { type: 'transferred', transfer: record() } }]);
    store.flush();
    flushSync();
    expect(mark()?.getAttribute('data-pending')).toBe('false');
    expect(mark()?.textContent?.trim()).toMatch(/^Sent .*\d/);
    store.enqueue([
      { seq: 103, change: { type: 'transferDropped', sourceMessageId: 'msg_1', sentMessageId: 'msg_other' } },
    ]);
    store.flush();
    flushSync();
    expect(mark(), 'another send of the message is not taken back').not.toBeNull();
    store.enqueue([
      { seq: 104, change: { type: 'transferDropped', sourceMessageId: 'msg_1', sentMessageId: 'msg_sent1' } },
    ]);
    store.flush();
    flushSync();
    expect(mark()).toBeNull();
  });

  it('keeps the newest send of a message, whatever order the records come in', () => {
    store.recordTransfer(record({ sentMessageId: 'msg_b', sentAt: 20 }));
    store.recordTransfer(record({ sentMessageId: 'msg_a', sentAt: 10 }));
    expect(store.transfers.get('msg_1')?.sentMessageId).toBe('msg_b');
  });

  it('asks before sending a message again, and sends with the yes only', async () => {
    store.recordTransfer(record());
    const el = render(TurnItem, { turn: turnOf(reply()), transferDirection: 'toImplementer' });
    el.querySelector<HTMLButtonElement>('[data-testid="transfer-button"]')!.click();
    flushSync();
    expect(invoke).not.toHaveBeenCalled();
    const dialog = document.querySelector('[data-testid="confirm-dialog"]');
    expect(dialog?.textContent).toContain('already sent');

    // Cancel: nothing is sent.
    [...dialog!.querySelectorAll<HTMLButtonElement>('button')].find((b) => b.textContent?.trim() === 'Cancel')!.click();
    flushSync();
    expect(document.querySelector('[data-testid="confirm-dialog"]')).toBeNull();
    expect(invoke).not.toHaveBeenCalled();

    invoke.mockResolvedValue({ targetSessionId: 'ses_impl', direction: 'toImplementer', messageId: 'msg_sent2' });
    el.querySelector<HTMLButtonElement>('[data-testid="transfer-button"]')!.click();
    flushSync();
    document.querySelector<HTMLButtonElement>('[data-testid="confirm-dialog"] [data-testid="confirm"]')!.click();
    await vi.waitFor(() => expect(document.querySelector('[data-testid="confirm-dialog"]')).toBeNull());
    expect(invoke).toHaveBeenCalledExactlyOnceWith({ cmd: 'transfer', sessionId: 'ses_review', messageId: 'msg_1', resend: true });
    expect(toasts.items.map((t) => t.level)).toEqual(['success']);
  });

  it('asks when another window sent it meanwhile, instead of showing an error', async () => {
    invoke.mockImplementation(async (req: { cmd: string }) => {
      if (req.cmd === 'transfer') throw { code: 'already_transferred', message: 'this message was already sent to the linked session' };
      if (req.cmd === 'listTransfers') return [record()];
      throw new Error(`unexpected ${req.cmd}`);
    });
    const el = render(TurnItem, { turn: turnOf(reply()), transferDirection: 'toImplementer' });
    el.querySelector<HTMLButtonElement>('[data-testid="transfer-button"]')!.click();
    await vi.waitFor(() => expect(document.querySelector('[data-testid="confirm-dialog"]')).not.toBeNull());
    expect(toasts.items).toEqual([]);
    expect(el.querySelector('[data-testid="transfer-sent"]')).not.toBeNull();
  });
});

describe('orphaned review session', () => {
  const base = { slug: 's', projectID: 'p', directory: '/a', title: 'Review: Login', version: '1', time: { created: 1, updated: 2 } };
  const orphan: SessionView = { ...base, id: 'ses_review', link: { kind: 'review', otherSessionId: 'ses_gone', otherExists: false } };

  it('offers no transfer, on either side of a link whose other session is gone', () => {
    expect(isOrphanedReview(orphan)).toBe(true);
    expect(transferDirectionOf(orphan)).toBeNull();
    expect(transferDirectionOf({ ...base, id: 'o', link: { kind: 'original', otherSessionId: 'r', otherExists: false } })).toBeNull();
    expect(isOrphanedReview({ ...orphan, link: { kind: 'review', otherSessionId: 'ses_gone', otherExists: true } })).toBe(false);
  });

  it('says so in its chat and offers to delete itself', async () => {
    invoke.mockImplementation(async (req: { cmd: string }) => {
      if (req.cmd === 'openSession') {
        return { seq: 1, sessionId: 'ses_review', hasOlder: false, messages: [{ info: reply().info, parts: reply().parts.map((p) => p.part) }] };
      }
      if (req.cmd === 'listTransfers') return [];
      return null;
    });
    store.sessions.set(orphan.id, orphan);
    const el = render(ChatView, { sessionId: 'ses_review' });
    await vi.waitFor(() => expect(el.querySelector('[data-testid="message-assistant"]')).not.toBeNull());
    const banner = el.querySelector('[data-testid="orphaned-review"]');
    expect(banner?.textContent).toContain('was deleted');
    expect(el.querySelector('[data-testid="transfer-button"]')).toBeNull();
    el.querySelector<HTMLButtonElement>('[data-testid="delete-orphaned-review"]')!.click();
    expect(ui.deleteSessionId).toBe('ses_review');
  });
});
