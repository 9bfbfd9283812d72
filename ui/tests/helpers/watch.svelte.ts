// Runs `read` in an effect and records every value it returns (for reactivity tests).
export function watch<T>(read: () => T): { values: T[]; stop: () => void } {
  const values: T[] = [];
  const stop = $effect.root(() => {
    $effect(() => {
      values.push(read());
    });
  });
  return { values, stop };
}
