// When to tell the user with an OS notification, and what it says. It reads one fact: the
// attention reasons the backend puts on each session. Each new reason of a live change is one
// notification, unless its kind is turned off in Settings or the user sees it already (the
// window is focused with the session on screen; a finished turn only while the window is in
// the background). Never for a snapshot or a replay.

import { reasonKey } from '$lib/attention';
import { t } from '$lib/i18n/index.svelte';
import type { OsNotification } from '$lib/host/notifications';
import type { AttentionReason } from '$lib/types/AttentionReason';
import type { NotificationSettings } from '$lib/types/NotificationSettings';
import type { SessionView } from '$lib/types/SessionView';

/** The kinds of notification, as named in the settings. */
export type NotifyKind = Exclude<keyof NotificationSettings, 'sound'>;

/** What the notifier reads and does; the app passes the real ones, tests their own. */
export interface NotifierDeps {
  show(n: OsNotification): Promise<boolean>;
  /** The window has the keyboard focus. */
  focused(): boolean;
  /** The session is shown (in the centre, or the active tab of an open panel). */
  onScreen(sessionId: string): boolean;
  /** The setting of this kind (on unless turned off). */
  enabled(kind: NotifyKind): boolean;
  /** Plays the short sound, when the user turned it on. */
  sound?(): void;
}

/** The setting a reason is told under. */
function settingOf(session: SessionView, reason: AttentionReason): NotifyKind {
  switch (reason.kind) {
    case 'permission':
      return 'permission';
    case 'question':
      return 'question';
    case 'turnFailed':
      return 'turnFailed';
    case 'turnFinished':
      return session.link?.kind === 'review' ? 'reviewDone' : 'turnFinished';
    case 'loopStopped':
    case 'loopEnded':
      return 'loopStopped';
    case 'reviewStale':
      return 'reviewStale';
    case 'handoffFailed':
      return 'handoffFailed';
  }
}

export class Notifier {
  private readonly told = new Set<string>();
  /** Every notification handed to `show`, newest last (for diagnostics and tests). */
  readonly shown: OsNotification[] = [];

  constructor(private readonly deps: NotifierDeps) {}

  private send(n: OsNotification): void {
    this.shown.push(n);
    void this.deps.show(n);
    this.deps.sound?.();
  }

  /** A session changed live: each reason it did not have before is news. */
  sessionChanged(session: SessionView, before: SessionView | undefined): void {
    const known = new Set((before?.attention ?? []).map((r) => reasonKey(session.id, r)));
    for (const reason of session.attention ?? []) {
      const key = reasonKey(session.id, reason);
      if (known.has(key) || this.told.has(key)) continue;
      this.told.add(key);
      this.attentionRaised(session, reason);
    }
  }

  /** Tells of one new reason, unless turned off or already in front of the user. */
  attentionRaised(session: SessionView, reason: AttentionReason): void {
    // A question seen in the transcript before its request: told once the request arrives.
    if (reason.kind === 'question' && !reason.requestId) return;
    const kind = settingOf(session, reason);
    if (!this.deps.enabled(kind)) return;
    const focused = this.deps.focused();
    if (reason.kind === 'turnFinished' ? focused : focused && this.deps.onScreen(session.id)) return;
    const title = session.title || t('sidebar.untitled');
    const what = reason.words;
    const id = session.id;
    switch (reason.kind) {
      case 'permission':
        this.send({ title: t('notify.permission.title'), body: t('notify.permission.body', { title, what }), sessionId: id, tag: `permission:${reason.requestId}` });
        return;
      case 'question':
        this.send({ title: t('notify.question.title'), body: t('notify.question.body', { title, what }), sessionId: id, tag: `question:${reason.requestId}` });
        return;
      case 'turnFinished':
        if (kind === 'reviewDone') {
          this.send({ title: t('notify.reviewDone.title'), body: t('notify.reviewDone.body', { title }), sessionId: id, tag: `review-done:${id}` });
        } else {
          this.send({ title: t('notify.turnFinished.title'), body: t('notify.turnFinished.body', { title }), sessionId: id, tag: `turn-done:${id}` });
        }
        return;
      case 'loopStopped':
      case 'loopEnded': {
        const why = reason.stop ? t(`notify.loopReason.${reason.stop}`) : what;
        this.send({ title: t('notify.loopStopped.title'), body: t('notify.loopStopped.body', { title, reason: why }), sessionId: id, tag: `loop:${id}` });
        return;
      }
      case 'turnFailed':
      case 'reviewStale':
      case 'handoffFailed':
        this.send({ title: t(`notify.${reason.kind}.title`), body: t(`notify.${reason.kind}.body`, { title, what }), sessionId: id, tag: `${reason.kind}:${id}` });
        return;
    }
  }
}
