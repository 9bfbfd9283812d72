// The app's notifier: an OS notification per new attention reason of a session (pushed live),
// with the real window focus, settings and host, and the optional short sound. Clicking one
// opens its session in the main area.

import { askNotificationPermission, onNotificationClick, playSound, showNotification, type NotifyPermission } from '$lib/host/notifications';
import { soonAfterPaint } from '$lib/frames';
import type { SessionView } from '$lib/types/SessionView';
import { Notifier } from '../notifier';
import { store } from '../store.svelte';
import { ui } from '../ui.svelte';
import { selectSession } from './sessions';

/** Whether the session is shown: in the centre, or in the active tab of the open panel. */
export function onScreen(sessionId: string): boolean {
  if (ui.selectedSessionId === sessionId) return true;
  return ui.panelOpen && store.activeTab === `session:${sessionId}`;
}

export const notifier = new Notifier({
  // Shown once the frame with the change has painted: asking the platform for the permission
  // and showing the notification are synchronous calls that would hold that frame back.
  show: (n) => new Promise((resolve) => soonAfterPaint(() => void showNotification(n).then(resolve, () => resolve(false)))),
  focused: () => typeof document !== 'undefined' && document.hasFocus(),
  onScreen,
  enabled: (kind) => store.settings.notifications?.[kind] ?? true,
  sound: () => {
    if (store.settings.notifications?.sound) soonAfterPaint(playSound);
  },
});

/** A session pushed live: its new attention reasons are news. */
export function sessionChanged(session: SessionView, before: SessionView | undefined): void {
  notifier.sessionChanged(session, before);
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
