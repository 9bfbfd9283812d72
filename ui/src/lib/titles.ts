// Session titles people can read: OpenCode names a new session `New session - <ISO time>` until
// its first reply gives it a real title; show that as "New session · 14:32" instead.

import { locale, t } from '$lib/i18n/index.svelte';

const DEFAULT_TITLE = /^(New session|Child session) - (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)$/;

/** The server's placeholder title, parsed: which kind and when; null for a real title. */
export function parseDefaultTitle(title: string): { child: boolean; at: Date } | null {
  const m = DEFAULT_TITLE.exec(title.trim());
  if (!m) return null;
  const at = new Date(m[2]);
  if (Number.isNaN(at.getTime())) return null;
  return { child: m[1] === 'Child session', at };
}

/** The two formats of [`shortWhen`], made once per locale (a list asks for one per row). */
const whenFormats = new Map<string, { time: Intl.DateTimeFormat; dayTime: Intl.DateTimeFormat }>();

/** When a session was made, short: the time today, else the day and time. */
export function shortWhen(at: Date, now: Date, locale: string): string {
  let formats = whenFormats.get(locale);
  if (!formats) {
    formats = {
      time: new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit' }),
      dayTime: new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' }),
    };
    whenFormats.set(locale, formats);
  }
  const sameDay = at.toDateString() === now.toDateString();
  return (sameDay ? formats.time : formats.dayTime).format(at);
}


/** The title to show for a session: its own, a readable stand-in for the server's placeholder,
 * or "Untitled session". */
export function sessionTitle(session: { title?: string | null } | undefined, now: Date = new Date()): string {
  const title = session?.title?.trim() ?? '';
  if (!title) return t('sidebar.untitled');
  const placeholder = parseDefaultTitle(title);
  if (!placeholder) return title;
  const when = shortWhen(placeholder.at, now, locale());
  return t(placeholder.child ? 'session.childTitle' : 'session.newTitle', { when });
}
