// soonAfterPaint: once after the next painted frame, or after the fallback when no frame comes
// (a hidden window draws none), never twice, and not at all once cancelled.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { soonAfterPaint, whenIdle } from '$lib/frames';

describe('soonAfterPaint', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('runs after the next frame and the task after it, once', () => {
    vi.useFakeTimers();
    const frames: FrameRequestCallback[] = [];
    vi.stubGlobal('requestAnimationFrame', (cb: FrameRequestCallback) => frames.push(cb));
    vi.stubGlobal('cancelAnimationFrame', () => undefined);
    const run = vi.fn();
    soonAfterPaint(run, 100);
    expect(run).not.toHaveBeenCalled();
    frames.shift()?.(0);
    expect(run).not.toHaveBeenCalled();
    vi.advanceTimersByTime(0);
    expect(run).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(200);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('runs after the fallback when no frame comes', () => {
    vi.useFakeTimers();
    vi.stubGlobal('requestAnimationFrame', () => 1);
    vi.stubGlobal('cancelAnimationFrame', () => undefined);
    const run = vi.fn();
    soonAfterPaint(run, 100);
    vi.advanceTimersByTime(99);
    expect(run).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('does not run once cancelled', () => {
    vi.useFakeTimers();
    const frames: FrameRequestCallback[] = [];
    vi.stubGlobal('requestAnimationFrame', (cb: FrameRequestCallback) => frames.push(cb));
    vi.stubGlobal('cancelAnimationFrame', () => undefined);
    const run = vi.fn();
    const cancel = soonAfterPaint(run, 100);
    cancel();
    frames.shift()?.(0);
    vi.advanceTimersByTime(500);
    expect(run).not.toHaveBeenCalled();
  });
});

describe('whenIdle', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('asks the page for an idle moment with the deadline given', () => {
    const asked: { timeout?: number }[] = [];
    const idle: (() => void)[] = [];
    vi.stubGlobal('requestIdleCallback', (cb: () => void, o?: { timeout: number }) => (idle.push(cb), asked.push(o ?? {})));
    const run = vi.fn();
    whenIdle(run, 700);
    expect(asked).toEqual([{ timeout: 700 }]);
    expect(run).not.toHaveBeenCalled();
    idle.shift()?.();
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('falls back to a timer where there are no idle callbacks', () => {
    vi.useFakeTimers();
    vi.stubGlobal('requestIdleCallback', undefined);
    const run = vi.fn();
    whenIdle(run, 700, 5);
    vi.advanceTimersByTime(4);
    expect(run).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(run).toHaveBeenCalledTimes(1);
  });
});
