// The count of items that need the person, on the window title and the desktop's badge: the
// desktop shell's `set_badge_count` command in the desktop window (the launcher-entry signal
// docks listen for on Linux, the platform's badge elsewhere), the Badging API in an installed
// web app; nothing where neither exists.

import { invoke as tauriInvoke } from '@tauri-apps/api/core';
import { isDesktop, withDesktopWindow } from './index';

/** Shows `count` on the badge (none at 0). */
export function setBadgeCount(count: number): void {
  try {
    if (isDesktop) {
      void tauriInvoke('set_badge_count', { count: Math.max(0, Math.floor(count)) }).catch(() => undefined);
      return;
    }
    const nav = navigator as Navigator & { setAppBadge?: (n?: number) => Promise<void>; clearAppBadge?: () => Promise<void> };
    if (count > 0) void nav.setAppBadge?.(count).catch(() => undefined);
    else void nav.clearAppBadge?.().catch(() => undefined);
  } catch {
    // No badge here.
  }
}

/** Puts the count in front of the window title (`(3) Crosscheck`). */
export function setTitleCount(base: string, count: number): void {
  const title = count > 0 ? `(${count}) ${base}` : base;
  withDesktopWindow((w) => w.setTitle(title));
  if (typeof document !== 'undefined') document.title = title;
}
