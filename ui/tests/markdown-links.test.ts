import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';

const openExternal = vi.fn();
vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return { ...actual, openExternal: (url: string) => openExternal(url) };
});

const { default: Markdown } = await import('$lib/components/common/Markdown.svelte');

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  openExternal.mockReset();
});

function render(text: string): HTMLElement {
  const target = document.createElement('div');
  document.body.appendChild(target);
  app = mount(Markdown, { target, props: { text } });
  flushSync();
  return target;
}

describe('links in markdown', () => {
  it('an in-page # link stays in the page and never opens a window', () => {
    const open = vi.spyOn(window, 'open').mockReturnValue(null);
    // jsdom has no scrolling: record where the link asked to go.
    const scrolled: string[] = [];
    Element.prototype.scrollIntoView = function (this: Element) {
      scrolled.push(this.getAttribute('data-anchor') ?? '');
    };
    const el = render('See [the steps](#steps) or [the site](https://example.com/docs).\n\n<h2 id="steps">Steps</h2>');
    const [inPage, external] = [...el.querySelectorAll('a')];
    inPage.click();
    expect(openExternal).not.toHaveBeenCalled();
    expect(open).not.toHaveBeenCalled();
    expect(scrolled).toEqual(['steps']);
    external.click();
    expect(openExternal).toHaveBeenCalledWith('https://example.com/docs');
    open.mockRestore();
  });
});
