// When to tell the user with an OS notification, and what it says: a manual review finished
// while the window was not focused, a session waits for a permission, a review loop stopped.
// Each kind can be turned off in Settings. Only live changes notify (never a snapshot or a
// replay), and each permission request at most once.

import { t } from '$lib/i18n/index.svelte';
import type { OsNotification } from '$lib/host/notifications';
import type { NotificationSettings } from '$lib/types/NotificationSettings';
import type { PermissionRequest } from '$lib/types/PermissionRequest';
import type { SessionView } from '$lib/types/SessionView';

/** The kinds of notification, as named in the settings. */
export type NotifyKind = keyof NotificationSettings;

/** What the notifier reads and does; the app passes the real ones, tests their own. */
export interface NotifierDeps {
  show(n: OsNotification): Promise<boolean>;
  /** The window has the keyboard focus. */
  focused(): boolean;
  /** The session is shown (in the centre, or the active tab of an open panel). */
  onScreen(sessionId: string): boolean;
  /** The setting of this kind (on unless turned off). */
  enabled(kind: NotifyKind): boolean;
  session(sessionId: string): SessionView | undefined;
  /** An automatic loop runs for this review session (its turns are not manual reviews). */
  loopRunning?(sessionId: string): boolean;
}

export class Notifier {
  private readonly asked = new Set<string>();
  /** Every notification handed to `show`, newest last (for diagnostics and tests). */
  readonly shown: OsNotification[] = [];

  constructor(private readonly deps: NotifierDeps) {}

  private titleOf(sessionId: string): string {
    return this.deps.session(sessionId)?.title || t('sidebar.untitled');
  }

  private send(n: OsNotification): void {
    this.shown.push(n);
    void this.deps.show(n);
  }

  /** A session's turn ended (busy to idle, pushed live): a manual review that finished while the
   * window was not focused is worth a notification. */
  turnFinished(sessionId: string): void {
    const session = this.deps.session(sessionId);
    if (session?.link?.kind !== 'review') return;
    if (!this.deps.enabled('reviewDone') || this.deps.focused()) return;
    if (this.deps.loopRunning?.(sessionId)) return;
    this.send({
      title: t('notify.reviewDone.title'),
      body: t('notify.reviewDone.body', { title: this.titleOf(sessionId) }),
      sessionId,
      tag: `review-done:${sessionId}`,
    });
  }

  /** A tool call waits for the user's permission (pushed live). Told when the user may not see
   * it: the window is not focused, or the session is not on screen. */
  permissionAsked(request: PermissionRequest): void {
    if (this.asked.has(request.id)) return;
    this.asked.add(request.id);
    if (!this.deps.enabled('permission')) return;
    if (this.deps.focused() && this.deps.onScreen(request.sessionID)) return;
    const what = [request.permission, ...request.patterns.slice(0, 2)].filter(Boolean).join(' ');
    this.send({
      title: t('notify.permission.title'),
      body: t('notify.permission.body', { title: this.titleOf(request.sessionID), what }),
      sessionId: request.sessionID,
      tag: `permission:${request.id}`,
    });
  }

  /** A review loop stopped, with the reason it gives (already localized). Told unless the
   * window is focused with that session on screen. */
  loopStopped(sessionId: string, reason: string): void {
    if (!this.deps.enabled('loopStopped')) return;
    if (this.deps.focused() && this.deps.onScreen(sessionId)) return;
    this.send({
      title: t('notify.loopStopped.title'),
      body: t('notify.loopStopped.body', { title: this.titleOf(sessionId), reason }),
      sessionId,
      tag: `loop:${sessionId}`,
    });
  }
}
