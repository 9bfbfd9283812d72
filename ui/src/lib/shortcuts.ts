// Shortcuts that browsers keep for themselves (Ctrl+N opens a window, Ctrl+W closes the tab;
// a page never sees them) get Alt alternatives that work in both hosts. Labels show the one
// that works where the UI runs: Ctrl in the desktop window, Alt in a browser.

import { isDesktop } from '$lib/host';
import { t } from '$lib/i18n/index.svelte';

/** What a shortcut does. */
export type ShortcutAction = 'newSession' | 'closeTab' | 'nextAttention';

// Ctrl+J opens the downloads in browsers, so a page gets Alt+J there.
const LETTER: Record<ShortcutAction, string> = { newSession: 'n', closeTab: 'w', nextAttention: 'j' };

/** The keys to show for an action in this host (`Ctrl+N` on the desktop, `Alt+N` in a browser). */
export function shortcutLabel(action: ShortcutAction, desktop: boolean = isDesktop): string {
  return `${desktop ? t('key.ctrl') : 'Alt'}+${LETTER[action].toUpperCase()}`;
}

/** Whether a key event is the action's shortcut: Ctrl/⌘+letter, or Alt+letter (by key code, so
 * layouts where Alt makes another character still match). */
export function isShortcut(event: KeyboardEvent, action: ShortcutAction): boolean {
  if (event.shiftKey) return false;
  const letter = LETTER[action];
  const mod = event.ctrlKey || event.metaKey;
  if (mod && !event.altKey) return event.key.toLowerCase() === letter;
  if (event.altKey && !mod) return event.code === `Key${letter.toUpperCase()}` || event.key.toLowerCase() === letter;
  return false;
}
