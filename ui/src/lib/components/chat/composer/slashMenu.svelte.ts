// The composer's `/` menu: the commands matching what follows the slash, the highlighted one,
// and the keys that move through it, pick, or close it.

import { commandQuery, filterCommands } from '$lib/commands';
import type { CommandEntry } from '$lib/types/CommandEntry';

/** The `/` menu of one composer; create it while the component initialises. */
export class SlashMenu {
  /** Closed with Escape (or by a pick) until the slash query goes away. */
  dismissed = $state(false);
  /** The highlighted row. */
  active = $state(0);
  /** The list's element id (for `aria-controls`). */
  readonly id = `cmd-${Math.random().toString(36).slice(2, 9)}`;
  readonly #text: () => string;
  readonly #commands: () => CommandEntry[];
  /** What follows the slash, or null when the text is not a command. */
  readonly query: string | null = $derived.by(() => commandQuery(this.#text()));
  /** The commands that match. */
  readonly items: CommandEntry[] = $derived.by(() => (this.query === null ? [] : filterCommands(this.#commands(), this.query)));
  /** Whether the menu shows. */
  readonly open: boolean = $derived.by(() => this.query !== null && !this.dismissed);

  constructor(text: () => string, commands: () => CommandEntry[]) {
    this.#text = text;
    this.#commands = commands;
    $effect(() => {
      // A new query starts at the top of the list.
      void this.query;
      this.active = 0;
    });
    $effect(() => {
      if (this.query === null) this.dismissed = false;
    });
  }

  /** Handles a key while the menu is open; true when the key was the menu's. */
  keydown(event: KeyboardEvent, pick: (command: CommandEntry) => void): boolean {
    const items = this.items;
    if (this.open && items.length > 0) {
      if (event.key === 'ArrowDown') {
        event.preventDefault();
        this.active = (this.active + 1) % items.length;
        return true;
      }
      if (event.key === 'ArrowUp') {
        event.preventDefault();
        this.active = (this.active - 1 + items.length) % items.length;
        return true;
      }
      if (event.key === 'Enter' || event.key === 'Tab') {
        const item = items[this.active];
        // Enter on a complete command name sends it; otherwise it picks.
        if (event.key === 'Tab' || !item || item.name !== this.query) {
          event.preventDefault();
          if (item) pick(item);
          return true;
        }
      }
    }
    if (this.open && event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      this.dismissed = true;
      return true;
    }
    return false;
  }
}
