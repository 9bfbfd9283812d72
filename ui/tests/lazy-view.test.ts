// A part loaded on first use: a loading line until its script is there, then the part; when
// the script cannot be loaded, a line that says so with Retry, which loads it again.
import { createRawSnippet, flushSync, mount, unmount } from 'svelte';
import { describe, expect, it } from 'vitest';
import LazyView from '../src/lib/components/common/LazyView.svelte';
import { Lazy } from '../src/lib/lazy.svelte';

/** An importer the test answers by hand. */
function gate() {
  const calls: { resolve: (m: { default: string }) => void; reject: (e: Error) => void }[] = [];
  const importer = () => new Promise<{ default: string }>((resolve, reject) => calls.push({ resolve, reject }));
  return { calls, importer };
}

const children = createRawSnippet((name: () => unknown) => ({ render: () => `<p data-testid="part">${String(name())}</p>` }));
const settle = () => new Promise((r) => setTimeout(r, 0)).then(() => flushSync());

describe('LazyView', () => {
  it('shows a loading line, then the part once its script is there', async () => {
    const { calls, importer } = gate();
    const view = new Lazy(importer);
    const target = document.createElement('div');
    const app = mount(LazyView, { target, props: { view, children } });
    flushSync();
    expect(target.querySelector('[data-testid="view-loading"]')).not.toBeNull();
    expect(calls).toHaveLength(1);
    calls[0].resolve({ default: 'chat' });
    await settle();
    expect(target.querySelector('[data-testid="view-loading"]')).toBeNull();
    expect(target.querySelector('[data-testid="part"]')?.textContent).toBe('chat');
    unmount(app);
  });

  it('says when the script cannot be loaded, and Retry loads it again', async () => {
    const { calls, importer } = gate();
    const view = new Lazy(importer);
    const target = document.createElement('div');
    const app = mount(LazyView, { target, props: { view, children } });
    flushSync();
    calls[0].reject(new Error('offline'));
    await settle();
    const failed = target.querySelector('[data-testid="view-failed"]');
    expect(failed).not.toBeNull();
    failed!.querySelector('button')!.click();
    await settle();
    expect(calls).toHaveLength(2);
    calls[1].resolve({ default: 'panel' });
    await settle();
    expect(target.querySelector('[data-testid="part"]')?.textContent).toBe('panel');
    unmount(app);
  });

  it('does not load while told to wait', async () => {
    const { calls, importer } = gate();
    const view = new Lazy(importer);
    const target = document.createElement('div');
    const app = mount(LazyView, { target, props: { view, children, wait: true } });
    flushSync();
    expect(calls).toHaveLength(0);
    unmount(app);
  });
});
