// Toast notifications: API errors (localized by code) and pushed notices.

import type { NoticeLevel } from '$lib/types/NoticeLevel';

export interface Toast {
  id: number;
  level: NoticeLevel;
  text: string;
  /** English detail (an error's message), shown smaller. */
  detail?: string;
}

export const AUTO_DISMISS_MS = 5000;
const MAX_TOASTS = 6;

class Toasts {
  items: Toast[] = $state([]);
  private next = 1;
  private timers = new Map<number, ReturnType<typeof setTimeout>>();

  push(level: NoticeLevel, text: string, detail?: string): number {
    // The same text twice in a row is one toast.
    const last = this.items[this.items.length - 1];
    if (last && last.text === text && last.level === level && last.detail === detail) return last.id;
    const id = this.next++;
    this.items.push({ id, level, text, detail: detail && detail !== text ? detail : undefined });
    while (this.items.length > MAX_TOASTS) {
      const drop = this.items.findIndex((t) => t.level !== 'error');
      this.dismiss(this.items[drop >= 0 ? drop : 0].id);
    }
    if (level !== 'error') {
      this.timers.set(id, setTimeout(() => this.dismiss(id), AUTO_DISMISS_MS));
    }
    return id;
  }

  dismiss(id: number): void {
    const timer = this.timers.get(id);
    if (timer) clearTimeout(timer);
    this.timers.delete(id);
    const i = this.items.findIndex((t) => t.id === id);
    if (i >= 0) this.items.splice(i, 1);
  }

  clear(): void {
    for (const t of [...this.items]) this.dismiss(t.id);
  }
}

export const toasts = new Toasts();
