// Renaming something in place (a session's row, a server's header): Enter or leaving the field
// saves a changed, non-empty name; Esc cancels. One rule for every place that renames inline.

/** The state of one in-place rename: whether its field shows, and what it holds. */
export class InlineRename {
  /** Whether the field is shown. */
  active = $state(false);
  /** What the field holds. */
  draft = $state('');
  readonly #current: () => string;
  readonly #save: (next: string) => Promise<unknown>;

  /** `current` gives the name now; `save` stores a new one and reports its own failure. */
  constructor(current: () => string, save: (next: string) => Promise<unknown>) {
    this.#current = current;
    this.#save = save;
  }

  /** Shows the field, holding the name now. */
  start = (): void => {
    this.draft = this.#current();
    this.active = true;
  };

  /** Hides the field and saves the draft when it is a new, non-empty name. */
  commit = async (): Promise<void> => {
    if (!this.active) return;
    this.active = false;
    const next = this.draft.trim();
    if (!next || next === this.#current()) return;
    try {
      await this.#save(next);
    } catch {
      // The save reports its own failure (a toast); the old name stays.
    }
  };

  /** Enter saves; Esc cancels without reaching the list's own Esc. */
  onKey = (event: KeyboardEvent): void => {
    if (event.key === 'Enter') {
      event.preventDefault();
      void this.commit();
    } else if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      this.active = false;
    }
  };
}
