// Code blocks in markdown: plain in the first frame (the highlighter is not even loaded), coloured
// after, hostile code kept as text, and a text coloured before comes coloured at once.
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it } from 'vitest';
import { highlighterLoaded } from '$lib/highlight';
import { renderMarkdown } from '$lib/markdown';

const { default: MarkdownBlock } = await import('$lib/components/common/MarkdownBlock.svelte');

let apps: ReturnType<typeof mount>[] = [];
afterEach(() => {
  for (const a of apps) unmount(a);
  apps = [];
  document.body.innerHTML = '';
});

function render(text: string) {
  const target = document.createElement('div');
  document.body.appendChild(target);
  apps.push(mount(MarkdownBlock, { target, props: { text } }));
  flushSync();
  return target;
}

async function until(check: () => boolean) {
  for (let i = 0; i < 200 && !check(); i++) {
    await new Promise((r) => setTimeout(r, 10));
    flushSync();
  }
}

const EVIL = '<img src=x onerror="globalThis.__pwned=1"><script>globalThis.__pwned=2</script>';

describe('code colours', () => {
  it('paints plain first, without the highlighter, then colours the block', async () => {
    const text = 'Look:\n\n```ts\nconst answer: number = 42; // yes\n```\n';
    const target = render(text);
    expect(highlighterLoaded()).toBe(false);
    expect(target.querySelector('pre code')?.textContent).toBe('const answer: number = 42; // yes');
    expect(target.querySelector('[class^="hljs-"]')).toBeNull();
    await until(() => !!target.querySelector('.hljs-keyword'));
    expect(highlighterLoaded()).toBe(true);
    expect(target.querySelector('.hljs-keyword')?.textContent).toBe('const');
    expect(target.querySelector('.hljs-comment')?.textContent).toBe('// yes');
    expect(target.querySelector('pre code')?.textContent).toBe('const answer: number = 42; // yes');

    // The same text again (a row scrolled back in): coloured in its first frame.
    const again = render(text);
    expect(again.querySelector('.hljs-keyword')).not.toBeNull();
  });

  it('keeps hostile code as text when coloured', async () => {
    const text = '```html\n' + EVIL + '\n```\n\n```js\nlet s = `' + EVIL + '`;\n```\n';
    const target = render(text);
    await until(() => target.querySelectorAll('code.hljs').length === 2);
    expect(target.querySelectorAll('code.hljs')).toHaveLength(2);
    expect(target.querySelector('img, script')).toBeNull();
    expect((globalThis as { __pwned?: number }).__pwned).toBeUndefined();
    expect(target.querySelectorAll('pre code')[0].textContent).toBe(EVIL);
  });

  it('leaves code without a known language plain', async () => {
    const text = '```\nplain words\n```\n\n```nosuchlang\nmore\n```\n';
    const target = render(text);
    await new Promise((r) => setTimeout(r, 200));
    flushSync();
    expect(target.querySelector('.hljs')).toBeNull();
    expect(target.querySelectorAll('pre code')).toHaveLength(2);
  });

  it('keeps GFM task list checkboxes, disabled', () => {
    const html = renderMarkdown('- [x] done\n- [ ] open\n');
    const div = document.createElement('div');
    div.innerHTML = html;
    const boxes = [...div.querySelectorAll<HTMLInputElement>('input[type="checkbox"]')];
    expect(boxes.map((b) => [b.checked, b.disabled])).toEqual([
      [true, true],
      [false, true],
    ]);
    expect(div.textContent).toContain('done');
    // Any other input a text brings becomes the same harmless, disabled checkbox.
    div.innerHTML = renderMarkdown('<input type="text" name="q" value="x" autofocus onfocus="alert(1)"> <input type="password">');
    const inputs = [...div.querySelectorAll('input')];
    expect(inputs.map((i) => i.outerHTML)).toEqual(['<input type="checkbox" disabled="">', '<input type="checkbox" disabled="">']);
  });
});
