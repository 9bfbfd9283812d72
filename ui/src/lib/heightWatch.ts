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
   * `onMeasured` gets the keys whose height changed in one batch of measurements, and the
   * height each had before (undefined for a row measured the first time).
   */
  constructor(
    keyOf: (el: HTMLElement) => string | undefined,
    onViewport: (height: number) => void,
    onMeasured: (keys: string[], before: (number | undefined)[]) => void,
  ) {
    this.observer =
      typeof ResizeObserver === 'undefined'
        ? null
        : new ResizeObserver((entries) => {
            const changed: string[] = [];
            const before: (number | undefined)[] = [];
            for (const entry of entries) {
              const el = entry.target as HTMLElement;
              if (el === this.container) {
                onViewport(el.clientHeight);
                continue;
              }
              const key = keyOf(el);
              const h = entry.borderBoxSize?.[0]?.blockSize ?? el.offsetHeight;
              const old = key ? this.heights.get(key) : undefined;
              if (!key || h <= 0 || old === h) continue;
              this.heights.set(key, h);
              changed.push(key);
              before.push(old);
            }
            if (changed.length) onMeasured(changed, before);
          });
  }

  /**
   * A Svelte action: measures a row while it is in the page. Its optional parameter is the row's
   * key: a row reused for another key is measured again (observing anew reports its size).
   */
  readonly measure = (node: HTMLElement, _key?: string) => {
    this.observer?.observe(node);
    return {
      update: () => {
        this.observer?.unobserve(node);
        this.observer?.observe(node);
      },
      destroy: () => this.observer?.unobserve(node),
    };
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
