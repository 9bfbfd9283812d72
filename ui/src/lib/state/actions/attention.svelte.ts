// The attention reasons at work in the UI: telling the backend which sessions the person looks
// at (so what seeing settles goes), the count in the window title and badge, the key that
// jumps to the next item, and answering permissions and questions from the "Needs you" list.

import { NeedsYouIndex, nextItem, type NeedsYouItem } from '$lib/attention';
import { HostError, invoke } from '$lib/host';
import { setBadgeCount, setTitleCount } from '$lib/host/badge';
import { soonAfterPaint } from '$lib/frames';
import { t, tError } from '$lib/i18n/index.svelte';
import type { PermissionReplyKind } from '$lib/types/PermissionReplyKind';
import { store } from '../store.svelte';
import { toasts } from '../toasts.svelte';
import { ui } from '../ui.svelte';
import { selectSession } from './sessions';

/** Whether the window has the keyboard focus (kept current by focus and blur events). */
const focus = $state({ value: typeof document !== 'undefined' && document.hasFocus() });

/** The sessions the person looks at now: the centre and the panel's active session, while the
 * window is focused. */
function lookedAt(): string[] {
  if (!focus.value) return [];
  const ids = new Set<string>();
  if (ui.selectedSessionId) ids.add(ui.selectedSessionId);
  const tab = ui.panelOpen ? store.activeTab : null;
  if (tab?.startsWith('session:')) ids.add(tab.slice('session:'.length));
  return [...ids].filter((id) => store.sessions.has(id));
}

/** The "Needs you" list, derived once for everything that reads it (the list, the count in the
 * title, the key that jumps); kept between changes by its index. */
class NeedsYouList {
  private readonly index = new NeedsYouIndex();
  /** Every item, newest first (none before the snapshot). */
  readonly items: NeedsYouItem[] = $derived(store.ready ? this.index.items(store.sessions.values()) : []);
}

/** The app's one "Needs you" list. */
export const needsYouList = new NeedsYouList();

/** Every item of the "Needs you" list, newest first. */
export function items(): NeedsYouItem[] {
  return needsYouList.items;
}

/** Starts telling the backend what is looked at, and the title and badge count; returns the
 * function that stops it. */
export function startSeeing(): () => void {
  const onFocus = () => (focus.value = document.hasFocus());
  window.addEventListener('focus', onFocus);
  window.addEventListener('blur', onFocus);
  const stopEffects = $effect.root(() => {
    $effect(() => {
      const ids = lookedAt();
      // Seen again whenever one of them gets a reason that seeing settles.
      const unread = ids.map((id) => (store.sessions.get(id)?.attention ?? []).map((r) => `${r.kind}:${r.since}`).join(','));
      if (ids.length === 0 || !store.ready) return;
      void unread;
      void invoke({ cmd: 'seeSessions', sessionIds: ids }).catch(() => undefined);
    });
    // The title and badge follow once the frame showing the change has painted (setting the
    // title is a synchronous call into the browser or window that would hold that frame back),
    // and only when the count or the app's name changed.
    let shown: string | null = null;
    let pending: (() => void) | null = null;
    $effect(() => {
      const count = items().length;
      const name = t('app.name');
      const key = `${count}:${name}`;
      if (key === shown) return;
      pending?.();
      pending = soonAfterPaint(() => {
        pending = null;
        shown = key;
        setTitleCount(name, count);
        setBadgeCount(count);
      });
    });
    return () => pending?.();
  });
  return () => {
    window.removeEventListener('focus', onFocus);
    window.removeEventListener('blur', onFocus);
    stopEffects();
  };
}

/** Opens the session of the next item after the one shown (the key that jumps). */
export function jumpToNextItem(): boolean {
  const item = nextItem(items(), ui.selectedSessionId);
  if (!item) return false;
  selectSession(item.session.id);
  return true;
}

/** A failure answering an item: a session that is gone says so. */
function reportAnswer(err: unknown, sessionId: string): void {
  const e = HostError.from(err);
  const gone = e.code === 'not_found' && e.message.includes(sessionId);
  toasts.push('error', gone ? t('needsYou.sessionGone') : tError(e.code), e.message);
}

/** Answers a permission from the list. */
export async function answerPermission(sessionId: string, requestId: string, reply: PermissionReplyKind): Promise<void> {
  try {
    await invoke({ cmd: 'replyPermission', sessionId, requestId, reply });
  } catch (err) {
    reportAnswer(err, sessionId);
  }
}

/** Answers a question from the list (`null` dismisses it). */
export async function answerQuestion(sessionId: string, requestId: string, answers: string[][] | null): Promise<void> {
  try {
    await invoke({ cmd: 'answerQuestion', sessionId, requestId, ...(answers ? { answers } : {}) });
  } catch (err) {
    reportAnswer(err, sessionId);
  }
}
