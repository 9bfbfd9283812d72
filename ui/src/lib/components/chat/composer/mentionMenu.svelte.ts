// The composer's `@` menu: the files of the session's folder matching what follows the `@`
// before the cursor (searched with a short debounce; an answer to an older query is dropped),
// the highlighted one, and the keys that move through it, pick, or close it.

import { untrack } from 'svelte';
import { mentionAt } from '$lib/attachments';
import { findFiles } from '$lib/state/actions/history';

/** The `@` menu of one composer; create it while the component initialises. */
export class MentionMenu {
  /** The files found for the query. */
  items: string[] = $state([]);
  /** Whether the list is being searched, ready, or the search failed. */
  status: 'ready' | 'loading' | 'failed' = $state('loading');
  /** The highlighted row. */
  active = $state(0);
  /** Closed with Escape (or by a pick) until the mention goes away. */
  dismissed = $state(false);
  /** The list's element id (for `aria-controls`). */
  readonly id = `files-${Math.random().toString(36).slice(2, 9)}`;
  readonly #sessionId: () => string;
  readonly #text: () => string;
  readonly #caret: () => number;
  readonly #slashQuery: () => string | null;
  #searchSeq = 0;
  /** The `@` mention before the cursor (none while the text is a `/` command). */
  readonly mention = $derived.by(() => (this.#slashQuery() === null ? mentionAt(this.#text(), this.#caret()) : null));
  /** Whether the menu shows. */
  readonly open: boolean = $derived.by(() => this.mention !== null && !this.dismissed);

  constructor(sessionId: () => string, text: () => string, caret: () => number, slashQuery: () => string | null) {
    this.#sessionId = sessionId;
    this.#text = text;
    this.#caret = caret;
    this.#slashQuery = slashQuery;
    $effect(() => {
      const q = this.open ? this.mention?.query : undefined;
      if (q === undefined) return;
      const seq = ++this.#searchSeq;
      // Read without tracking: an answer must not start the search again.
      if (untrack(() => this.items.length) === 0) this.status = 'loading';
      const timer = setTimeout(() => {
        findFiles(this.#sessionId(), q).then(
          (found) => {
            if (seq !== this.#searchSeq) return;
            this.items = found;
            this.status = 'ready';
            this.active = 0;
          },
          () => {
            if (seq !== this.#searchSeq) return;
            this.items = [];
            this.status = 'failed';
          },
        );
      }, 150);
      return () => clearTimeout(timer);
    });
    $effect(() => {
      if (this.mention === null) {
        this.dismissed = false;
        this.items = [];
      }
    });
  }

  /** Handles a key while the menu is open; true when the key was the menu's. */
  keydown(event: KeyboardEvent, pick: (path: string) => void): boolean {
    if (!this.open) return false;
    const items = this.items;
    if (items.length > 0 && event.key === 'ArrowDown') {
      event.preventDefault();
      this.active = (this.active + 1) % items.length;
      return true;
    }
    if (items.length > 0 && event.key === 'ArrowUp') {
      event.preventDefault();
      this.active = (this.active - 1 + items.length) % items.length;
      return true;
    }
    if ((event.key === 'Enter' || event.key === 'Tab') && items[this.active]) {
      event.preventDefault();
      pick(items[this.active]);
      return true;
    }
    if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      this.dismissed = true;
      return true;
    }
    return false;
  }
}
