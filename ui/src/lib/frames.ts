// Work that must not run in the task that built a view: the next frame (before its paint) and
// the task after that paint. Without animation frames (a test without a stub) both run at once.

/** Runs `run` in the next animation frame; answers a function that cancels it. */
export function nextFrame(run: () => void): () => void {
  if (typeof requestAnimationFrame !== 'function') {
    run();
    return () => undefined;
  }
  const frame = requestAnimationFrame(() => run());
  return () => cancelAnimationFrame(frame);
}

/** Runs `run` in a task of its own after the next frame has painted; answers a canceller. */
export function afterPaint(run: () => void): () => void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const cancelFrame = nextFrame(() => {
    timer = setTimeout(run, 0);
  });
  return () => {
    cancelFrame();
    if (timer !== null) clearTimeout(timer);
  };
}

/** Runs `run` once, after the next frame has painted or after `fallbackMs` if no frame comes
 * first (a hidden or throttled window draws none): for work a person should meet soon but that
 * must not hold back the frame showing a change (the window title, notifications). */
export function soonAfterPaint(run: () => void, fallbackMs = 100): () => void {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    cancelPaint();
    clearTimeout(timer);
    run();
  };
  const cancelPaint = afterPaint(once);
  const timer = setTimeout(once, fallbackMs);
  return () => {
    done = true;
    cancelPaint();
    clearTimeout(timer);
  };
}

type IdleScheduler = (run: () => void, options?: { timeout: number }) => number;

/** The page's `requestIdleCallback`, or null where there is none (tests, some engines). */
export function idleScheduler(): IdleScheduler | null {
  const ric = (globalThis as { requestIdleCallback?: IdleScheduler }).requestIdleCallback;
  return typeof ric === 'function' ? ric : null;
}

/** Runs `run` once the page is idle (at the latest after `timeoutMs`), or after `fallbackMs` on
 * a timer where there are no idle callbacks. */
export function whenIdle(run: () => void, timeoutMs: number, fallbackMs = 16): void {
  const ric = idleScheduler();
  if (ric) ric(run, { timeout: timeoutMs });
  else setTimeout(run, fallbackMs);
}
