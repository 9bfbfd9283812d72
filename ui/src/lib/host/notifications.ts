// OS notifications: Tauri's notification plugin in the desktop window, the browser's
// Notification API in web mode. The permission is asked for when the first notification is
// about to show (or when the user asks in Settings), never at start-up. A click on a notification
// brings the window forward and hands its session to the handler set with `onNotificationClick`.

import { isPermissionGranted, onAction, requestPermission, sendNotification } from '@tauri-apps/plugin-notification';
import chimeUrl from '../../assets/attention.wav?url';
import { isDesktop, withDesktopWindow } from './index';

/** What the user allowed: `default` until asked; `unsupported` where there is no API. */
export type NotifyPermission = 'granted' | 'denied' | 'default' | 'unsupported';

/** One notification to show. */
export interface OsNotification {
  title: string;
  body: string;
  /** The session a click opens. */
  sessionId: string;
  /** Notifications with the same tag replace each other (web mode). */
  tag: string;
}

let clickHandler: (sessionId: string) => void = () => undefined;

/** Sets what a click on a notification does with its session. */
export function onNotificationClick(handler: (sessionId: string) => void): void {
  clickHandler = handler;
}

/** The browser's answer, read once per `Notification` API: `Notification.permission` is a
 * synchronous call into the browser (about 2 ms here, in the task after each new item's frame).
 * Read again after the permission's change event; what `askNotificationPermission` hears is held. */
let webPermission: { api: typeof Notification; value: NotificationPermission } | null = null;

function readWebPermission(): NotificationPermission {
  if (webPermission?.api === Notification) return webPermission.value;
  const held = { api: Notification, value: Notification.permission };
  webPermission = held;
  // A change made in the browser's site settings (or no change event to hear): read it again.
  const forget = () => {
    if (webPermission?.api === held.api) webPermission = null;
  };
  void navigator.permissions
    ?.query({ name: 'notifications' })
    .then((status) => status.addEventListener('change', forget, { once: true }))
    .catch(forget);
  return held.value;
}

/** Whether notifications may show now, without asking. */
export async function notificationPermission(): Promise<NotifyPermission> {
  if (isDesktop) {
    try {
      return (await isPermissionGranted()) ? 'granted' : 'default';
    } catch {
      return 'unsupported';
    }
  }
  if (typeof Notification === 'undefined') return 'unsupported';
  return readWebPermission();
}

/** Asks for the permission when it was never asked for; answers what it is then. */
export async function askNotificationPermission(): Promise<NotifyPermission> {
  const now = await notificationPermission();
  if (now !== 'default') return now;
  try {
    const answer = isDesktop ? await requestPermission() : await askWebPermission();
    return answer === 'granted' || answer === 'denied' ? answer : 'default';
  } catch {
    return 'unsupported';
  }
}

/** The browser's question to the person; what it answers is held as the permission. */
async function askWebPermission(): Promise<NotificationPermission> {
  const answer = await Notification.requestPermission();
  webPermission = { api: Notification, value: answer };
  return answer;
}

let desktopListener: Promise<unknown> | null = null;

/** The session a desktop `actionPerformed` payload names (read leniently: platforms differ). */
export function sessionOfAction(payload: unknown): string | null {
  if (typeof payload !== 'object' || payload === null) return null;
  const p = payload as { notification?: { extra?: Record<string, unknown> }; extra?: Record<string, unknown> };
  const id = p.notification?.extra?.sessionId ?? p.extra?.sessionId;
  return typeof id === 'string' && id ? id : null;
}

function focusWindow(): void {
  if (isDesktop) {
    withDesktopWindow((w) => w.setFocus());
  } else {
    window.focus();
  }
}

/** Shows a notification (asking for the permission first when it never was); false when it
 * cannot show (denied, unsupported, or the platform refused). */
export async function showNotification(n: OsNotification): Promise<boolean> {
  if ((await askNotificationPermission()) !== 'granted') return false;
  try {
    if (isDesktop) {
      // The plugin reports clicks only to listeners that existed when the notification showed.
      desktopListener ??= onAction((payload: unknown) => {
        const sessionId = sessionOfAction(payload);
        if (!sessionId) return;
        focusWindow();
        clickHandler(sessionId);
      });
      await desktopListener;
      sendNotification({ title: n.title, body: n.body, extra: { sessionId: n.sessionId } });
      return true;
    }
    const note = new Notification(n.title, { body: n.body, tag: n.tag });
    note.onclick = () => {
      focusWindow();
      note.close();
      clickHandler(n.sessionId);
    };
    return true;
  } catch (err) {
    console.warn('could not show a notification', err);
    return false;
  }
}

let chime: HTMLAudioElement | null = null;

/** Plays the short bundled chime (a failure, such as autoplay refused, stays silent). */
export function playSound(): void {
  try {
    chime ??= new Audio(chimeUrl);
    chime.currentTime = 0;
    void chime.play().catch(() => undefined);
  } catch {
    // No audio here.
  }
}
