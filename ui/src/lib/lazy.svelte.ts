// Parts of the page the first screen does not show (the chat, the side panel, dialogs,
// settings) are separate scripts, loaded when first wanted: the page starts on a small one.

/** A component loaded on first use; `component` is reactive. */
export class Lazy<C> {
  /** The component, once loaded. */
  component: C | null = $state.raw(null);
  /** The last load failed; the next `load()` tries again. */
  failed = $state(false);
  #loading: Promise<void> | null = null;
  readonly #importer: () => Promise<{ default: C }>;

  constructor(importer: () => Promise<{ default: C }>) {
    this.#importer = importer;
  }

  /** Starts loading (once); resolves when the component is there or the load failed. */
  load(): Promise<void> {
    this.#loading ??= this.#importer().then(
      (module) => {
        this.component = module.default;
        this.failed = false;
      },
      () => {
        this.failed = true;
        this.#loading = null;
      },
    );
    return this.#loading;
  }
}
