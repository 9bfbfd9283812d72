// Toast notifications: API errors (localized by code) and pushed notices. Every toast expires
// (errors a little later), pauses while the pointer or focus is on it or its details are open,
// and a repeat of one already shown counts up on it instead of stacking a copy.

import type { NoticeLevel } from '$lib/types/NoticeLevel';

export interface Toast {
  id: number;
  level: NoticeLevel;
  /** What happened and what to do, in one sentence. */
  text: string;
  /** The technical detail (an error's English message), behind a "Details" toggle. */
  detail?: string;
  /** How many times it was shown (1 until it repeats). */
  count: number;
}

/** How long an info or success toast stays. */
export const AUTO_DISMISS_MS = 5000;
/** How long an error toast stays: long enough to read the sentence and open the details. */
export const ERROR_DISMISS_MS = 9000;
const MAX_TOASTS = 6;

class Toasts {
  items: Toast[] = $state([]);
  private next = 1;
  private timers = new Map<number, ReturnType<typeof setTimeout>>();
  private held = new Set<number>();

  push(level: NoticeLevel, text: string, detail?: string): number {
    const cleanDetail = detail && detail.trim() !== '' && detail !== text ? detail : undefined;
    // A repeat counts up on the toast already shown, with the newest detail, and starts its
    // time again.
    const same = this.items.find((t) => t.text === text && t.level === level);
    if (same) {
      same.count += 1;
      if (cleanDetail) same.detail = cleanDetail;
      this.arm(same.id);
      return same.id;
    }
    const id = this.next++;
    this.items.push({ id, level, text, detail: cleanDetail, count: 1 });
    while (this.items.length > MAX_TOASTS) {
      const drop = this.items.findIndex((t) => t.level !== 'error');
      this.dismiss(this.items[drop >= 0 ? drop : 0].id);
    }
    this.arm(id);
    return id;
  }

  /** Keeps a toast (pointer or focus on it, details open) until [`release`]. */
  hold(id: number): void {
    this.held.add(id);
    const timer = this.timers.get(id);
    if (timer) clearTimeout(timer);
    this.timers.delete(id);
  }

  /** Lets a held toast expire again, its full time from now. */
  release(id: number): void {
    this.held.delete(id);
    this.arm(id);
  }

  dismiss(id: number): void {
    const timer = this.timers.get(id);
    if (timer) clearTimeout(timer);
    this.timers.delete(id);
    this.held.delete(id);
    const i = this.items.findIndex((t) => t.id === id);
    if (i >= 0) this.items.splice(i, 1);
  }

  clear(): void {
    for (const t of [...this.items]) this.dismiss(t.id);
  }

  private arm(id: number): void {
    const timer = this.timers.get(id);
    if (timer) clearTimeout(timer);
    this.timers.delete(id);
    const toast = this.items.find((t) => t.id === id);
    if (!toast || this.held.has(id)) return;
    const ms = toast.level === 'error' ? ERROR_DISMISS_MS : AUTO_DISMISS_MS;
    this.timers.set(
      id,
      setTimeout(() => this.dismiss(id), ms),
    );
  }
}

export const toasts = new Toasts();
