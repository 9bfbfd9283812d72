// The heights a windowed list needs to place rows it has not built: one ResizeObserver measures
// each built row (by its key) and the scrolling container (the viewport's height). The sidebar
// and the transcript's VirtualList both use it.

/** Measures keyed rows and their container; nothing where the browser has no ResizeObserver. */
export class HeightWatch {
  /** Measured row heights by key (not reactive: `onMeasured` says when they change). */
  readonly heights = new Map<string, number>();
  private readonly observer: ResizeObserver | null;
  private container: HTMLElement | null = null;

  /**
   * `keyOf` names a row element's key; `onViewport` gets the container's new height;
   * `onMeasured` gets the keys whose height changed in one batch of measurements.
   */
  constructor(
    keyOf: (el: HTMLElement) => string | undefined,
    onViewport: (height: number) => void,
    onMeasured: (keys: string[]) => void,
  ) {
    this.observer =
      typeof ResizeObserver === 'undefined'
        ? null
        : new ResizeObserver((entries) => {
            const changed: string[] = [];
            for (const entry of entries) {
              const el = entry.target as HTMLElement;
              if (el === this.container) {
                onViewport(el.clientHeight);
                continue;
              }
              const key = keyOf(el);
              const h = entry.borderBoxSize?.[0]?.blockSize ?? el.offsetHeight;
              if (!key || h <= 0 || this.heights.get(key) === h) continue;
              this.heights.set(key, h);
              changed.push(key);
            }
            if (changed.length) onMeasured(changed);
          });
  }

  /** A Svelte action: measures a row while it is in the page. */
  readonly measure = (node: HTMLElement) => {
    this.observer?.observe(node);
    return { destroy: () => this.observer?.unobserve(node) };
  };

  /** Follows the container's height; returns the function that stops following it. */
  watchContainer(el: HTMLElement): () => void {
    this.container = el;
    this.observer?.observe(el);
    return () => {
      this.observer?.unobserve(el);
      if (this.container === el) this.container = null;
    };
  }

  /** Stops measuring anything. */
  disconnect(): void {
    this.observer?.disconnect();
  }
}
