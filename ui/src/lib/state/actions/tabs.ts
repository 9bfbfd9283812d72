// Context panel tabs. The backend owns them: each action is a request, and the tabs come back
// as one pushed change that the store applies.

import { t } from '$lib/i18n/index.svelte';
import type { Session } from '$lib/types/Session';
import type { Tab } from '$lib/types/Tab';
import { ui } from '../ui.svelte';
import { call } from './call';

/** Key of a session's chat tab. */
export function sessionTabKey(sessionId: string): string {
  return `session:${sessionId}`;
}

/** The chat tab of a session. */
export function sessionTab(session: Session): Tab {
  return {
    mode: 'chat',
    dedupeKey: sessionTabKey(session.id),
    label: session.title || t('sidebar.untitled'),
    directory: session.directory,
    sessionId: session.id,
  };
}

/** Key of the (single) Reviews tab. */
export const REVIEWS_TAB_KEY = 'reviews';

/** Opens (pins) a session in the context panel. The main view's own session moves there: the
 * same session is never open twice. */
export function openInPanel(session: Session): void {
  ui.setPanelOpen(true);
  if (ui.selectedSessionId === session.id) ui.select(null);
  call({ cmd: 'openTab', tab: sessionTab(session) }).catch(() => undefined);
}

/** Opens the Reviews tab. */
export function openReviewsTab(): void {
  ui.setPanelOpen(true);
  call({ cmd: 'openTab', tab: { mode: 'reviews', dedupeKey: REVIEWS_TAB_KEY, label: t('panel.reviews') } }).catch(
    () => undefined,
  );
}

/** Closes a tab. */
export function closeTab(key: string): void {
  call({ cmd: 'closeTab', key }).catch(() => undefined);
}

/** Shows a tab. */
export function activateTab(key: string): void {
  call({ cmd: 'activateTab', key }).catch(() => undefined);
}

/** Moves a tab to another place. */
export function moveTab(key: string, toIndex: number): void {
  call({ cmd: 'moveTab', key, toIndex }).catch(() => undefined);
}
