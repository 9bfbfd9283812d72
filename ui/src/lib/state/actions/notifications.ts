// The app's notifier: OS notifications for a finished manual review, a waiting permission and a
// stopped review loop, with the real window focus, settings and host. Clicking one opens its
// session in the main area.

import { askNotificationPermission, onNotificationClick, showNotification, type NotifyPermission } from '$lib/host/notifications';
import { t } from '$lib/i18n/index.svelte';
import type { LoopState } from '$lib/types/LoopState';
import type { LoopStop } from '$lib/types/LoopStop';
import { Notifier } from '../notifier';
import { store } from '../store.svelte';
import { ui } from '../ui.svelte';
import { selectSession } from './sessions';

/** Whether the session is shown: in the centre, or in the active tab of the open panel. */
function onScreen(sessionId: string): boolean {
  if (ui.selectedSessionId === sessionId) return true;
  return ui.panelOpen && store.activeTab === `session:${sessionId}`;
}

/** The newest state of each review loop seen live, by review session. */
const loops = new Map<string, LoopState>();
/** Loops already told of, by loop id. */
const told = new Set<string>();
/** Stops older than this were not news when this page started. */
const startedAt = Date.now();

export const notifier = new Notifier({
  show: showNotification,
  focused: () => typeof document !== 'undefined' && document.hasFocus(),
  onScreen,
  enabled: (kind) => store.settings.notifications?.[kind] ?? true,
  session: (id) => store.sessions.get(id),
  loopRunning: (id) => {
    const loop = loops.get(id);
    return !!loop && !loop.ended;
  },
});

/** A loop's stop reason in words, with the findings it concerns. */
export function loopStopText(stop: LoopStop): string {
  const reason = t(`notify.loopReason.${stop.reason}`);
  return stop.findingIds.length ? `${reason} (${stop.findingIds.join(', ')})` : reason;
}

/** A loop state pushed live: a stop not told of yet is a notification. */
export function loopChanged(state: LoopState): void {
  loops.set(state.reviewSessionId, state);
  if (!state.ended || !state.stop || told.has(state.id)) return;
  told.add(state.id);
  if (state.stop.at < startedAt - 5_000) return;
  notifier.loopStopped(state.reviewSessionId, loopStopText(state.stop));
}

/** Clicking a notification opens its session (boot calls this once). */
export function startNotifications(): void {
  onNotificationClick((sessionId) => {
    if (store.sessions.has(sessionId)) selectSession(sessionId);
  });
}

/** Asks for the permission now (Settings, on the user's click). */
export function allowNotifications(): Promise<NotifyPermission> {
  return askNotificationPermission();
}
