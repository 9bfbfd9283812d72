// One session's loaded transcript, kept fine-grained: a streamed delta changes one PartView's
// `text` signal and nothing else, so only that part's component re-renders.

import type { MessageInfo } from '$lib/types/MessageInfo';
import type { MessageWithParts } from '$lib/types/MessageWithParts';
import type { Part } from '$lib/types/Part';
import type { OlderPage } from '$lib/types/OlderPage';
import type { TranscriptPage } from '$lib/types/TranscriptPage';

/** A part of a message. `text` is a separate signal so deltas touch only it. */
export class PartView {
  readonly id: string;
  // State fields are created in the constructor (a first assignment, not a write), which
  // keeps building thousands of them cheap.
  declare part: Part;
  declare text: string;

  constructor(part: Part) {
    this.id = part.id;
    this.part = $state.raw(part);
    this.text = $state(part.text ?? '');
  }

  /** Replaces the part (text included) with a newer copy from the server. */
  update(part: Part): void {
    this.part = part;
    this.text = part.text ?? '';
  }
}

/** A message header and its parts, in server order. */
export class MessageView {
  readonly id: string;
  declare info: MessageInfo;
  /** Parts ordered by id (ids are time-ordered). Replaced on insert or removal only. */
  declare parts: PartView[];
  private readonly index = new Map<string, PartView>();

  constructor(info: MessageInfo, parts: Part[] = []) {
    this.id = info.id;
    this.info = $state.raw(info);
    const views: PartView[] = [];
    for (const p of parts) {
      if (this.index.has(p.id)) continue;
      const view = new PartView(p);
      this.index.set(p.id, view);
      views.push(view);
    }
    this.parts = $state.raw(views);
  }

  /** Replaces the parts with the given list, reusing the PartViews that survive. */
  setParts(parts: Part[]): void {
    const next: PartView[] = [];
    const seen = new Set<string>();
    for (const p of parts) {
      if (seen.has(p.id)) continue;
      seen.add(p.id);
      let view = this.index.get(p.id);
      if (view) view.update(p);
      else {
        view = new PartView(p);
        this.index.set(p.id, view);
      }
      next.push(view);
    }
    for (const id of [...this.index.keys()]) if (!seen.has(id)) this.index.delete(id);
    if (!sameList(next, this.parts)) this.parts = next;
  }

  part(id: string): PartView | undefined {
    return this.index.get(id);
  }

  upsertPart(part: Part): PartView {
    const existing = this.index.get(part.id);
    if (existing) {
      existing.update(part);
      return existing;
    }
    const view = new PartView(part);
    this.index.set(part.id, view);
    this.parts = insertSorted(this.parts, view);
    return view;
  }

  removePart(id: string): void {
    if (!this.index.delete(id)) return;
    this.parts = this.parts.filter((p) => p.id !== id);
  }

  /** Visible (non-synthetic, non-ignored) text of the message's text parts. */
  visibleText(): string {
    return this.parts
      .filter((p) => p.part.type === 'text' && !p.part.synthetic && !p.part.ignored && p.text.trim() !== '')
      .map((p) => p.text)
      .join('\n\n');
  }
}

/** A session's loaded window of messages, oldest first. */
export class Transcript {
  readonly sessionId: string;
  /** Messages ordered by id. Replaced on insert or removal only; deltas never touch it. */
  messages: MessageView[] = $state.raw([]);
  hasOlder: boolean = $state(false);
  /** The first page has arrived. */
  loaded: boolean = $state(false);
  loading: boolean = $state(false);
  loadingOlder: boolean = $state(false);
  /** Error code of the last failed load. */
  error: string | null = $state(null);
  /** Sequence number of the newest page or change applied. */
  seq = 0;
  private readonly index = new Map<string, MessageView>();

  constructor(sessionId: string) {
    this.sessionId = sessionId;
  }

  message(id: string): MessageView | undefined {
    return this.index.get(id);
  }

  /** Replaces the window with a page, reusing message and part objects that survive. */
  applyPage(page: TranscriptPage): void {
    const next: MessageView[] = [];
    const seen = new Set<string>();
    const sorted = isSortedById(page.messages) ? page.messages : [...page.messages].sort(byInfoId);
    for (const m of sorted) {
      if (seen.has(m.info.id)) continue;
      seen.add(m.info.id);
      next.push(this.reconcile(m));
    }
    for (const id of [...this.index.keys()]) if (!seen.has(id)) this.index.delete(id);
    if (!sameList(next, this.messages)) this.messages = next;
    this.hasOlder = page.hasOlder;
    this.seq = Math.max(this.seq, page.seq);
    this.loaded = true;
    this.error = null;
  }

  /** Puts an older page in front of the window. Only the page's messages are built or
   * reconciled (a loaded copy takes the page's state, for the replay that follows); the ids
   * touched. Costs the page, not the window. */
  prependPage(page: OlderPage): Set<string> {
    const touched = new Set<string>();
    const sorted = isSortedById(page.messages) ? page.messages : [...page.messages].sort(byInfoId);
    const fresh: MessageView[] = [];
    let merged = false;
    for (const m of sorted) {
      if (touched.has(m.info.id)) continue;
      touched.add(m.info.id);
      if (this.index.has(m.info.id)) merged = true;
      const view = this.reconcile(m);
      if (!merged) fresh.push(view);
    }
    this.hasOlder = page.hasOlder;
    this.seq = Math.max(this.seq, page.seq);
    if (fresh.length === 0 && !merged) return touched;
    const oldest = this.messages[0];
    const newestFresh = fresh[fresh.length - 1];
    if (!merged && (oldest === undefined || newestFresh.id < oldest.id)) {
      this.messages = fresh.concat(this.messages);
    } else {
      // Rare: the page overlaps what is loaded. Rebuild the order from the index.
      this.messages = [...this.index.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    }
    return touched;
  }

  private reconcile(m: MessageWithParts): MessageView {
    const existing = this.index.get(m.info.id);
    if (existing) {
      existing.info = m.info;
      existing.setParts(m.parts);
      return existing;
    }
    const view = new MessageView(m.info, m.parts);
    this.index.set(view.id, view);
    return view;
  }

  upsertMessage(info: MessageInfo): MessageView {
    const existing = this.index.get(info.id);
    if (existing) {
      existing.info = info;
      return existing;
    }
    const view = new MessageView(info);
    this.index.set(view.id, view);
    this.messages = insertSorted(this.messages, view);
    return view;
  }

  removeMessage(id: string): void {
    if (!this.index.delete(id)) return;
    this.messages = this.messages.filter((m) => m.id !== id);
  }

  /** The message a part belongs to, created as a placeholder when the header has not arrived. */
  private ensureMessage(messageId: string): MessageView {
    return (
      this.index.get(messageId) ??
      this.upsertMessage({ id: messageId, sessionID: this.sessionId, role: '', time: { created: 0 } })
    );
  }

  upsertPart(part: Part): void {
    this.ensureMessage(part.messageID).upsertPart(part);
  }

  /** Appends streamed text in place. */
  appendDelta(messageId: string, partId: string, field: string, delta: string): void {
    if (field !== 'text') return;
    this.deltaTarget(messageId, partId).text += delta;
  }

  /** The part a text delta goes to, created when its header has not arrived yet. */
  deltaTarget(messageId: string, partId: string): PartView {
    const message = this.ensureMessage(messageId);
    return (
      message.part(partId) ??
      message.upsertPart({
        id: partId,
        sessionID: this.sessionId,
        messageID: messageId,
        type: 'text',
        text: '',
        synthetic: false,
        ignored: false,
      })
    );
  }

  removePart(messageId: string, partId: string): void {
    this.index.get(messageId)?.removePart(partId);
  }

  /** The newest user message, for the default model and agent. */
  lastUserMessage(): MessageView | undefined {
    for (let i = this.messages.length - 1; i >= 0; i--) if (this.messages[i].info.role === 'user') return this.messages[i];
    return undefined;
  }
}

function byInfoId(a: MessageWithParts, b: MessageWithParts): number {
  return a.info.id < b.info.id ? -1 : a.info.id > b.info.id ? 1 : 0;
}

function isSortedById(list: MessageWithParts[]): boolean {
  for (let i = 1; i < list.length; i++) if (list[i - 1].info.id > list[i].info.id) return false;
  return true;
}

function sameList<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Inserts by id, appending cheaply in the common case (new items are the newest). */
function insertSorted<T extends { id: string }>(list: readonly T[], item: T): T[] {
  const n = list.length;
  if (n === 0 || list[n - 1].id <= item.id) return [...list, item];
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid].id < item.id) lo = mid + 1;
    else hi = mid;
  }
  return [...list.slice(0, lo), item, ...list.slice(lo)];
}
