// A markdown block that goes (its row scrolled out of the transcript's window) lets go of its
// rendered DOM at once: the detached element is left empty, so nothing of the reply's html stays
// alive until the web view's garbage collector next runs.
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it } from 'vitest';

const { default: MarkdownBlock } = await import('$lib/components/common/MarkdownBlock.svelte');
const { default: Markdown } = await import('$lib/components/common/Markdown.svelte');

afterEach(() => {
  document.body.innerHTML = '';
});

const REPLY = 'Step 1: the **first** point.\n\n- one\n- two with `code`\n\n```ts\nconst a = 1;\n```\n\nThat is all.';

describe('markdown DOM after a block goes', () => {
  it('empties the block element when it is unmounted', () => {
    const target = document.createElement('div');
    document.body.appendChild(target);
    const app = mount(MarkdownBlock, { target, props: { text: REPLY } });
    flushSync();
    const md = target.querySelector<HTMLElement>('.md');
    expect(md?.querySelector('pre code')?.textContent).toBe('const a = 1;');
    expect(md?.querySelectorAll('li')).toHaveLength(2);
    unmount(app);
    flushSync();
    expect(md?.isConnected).toBe(false);
    expect(md?.childNodes).toHaveLength(0);
  });

  it('empties every block of a long text split in blocks', () => {
    const long = Array.from({ length: 12 }, (_, i) => `Paragraph ${i}: ${'words '.repeat(80)}`).join('\n\n');
    const target = document.createElement('div');
    document.body.appendChild(target);
    const app = mount(Markdown, { target, props: { text: long } });
    flushSync();
    const blocks = [...target.querySelectorAll<HTMLElement>('.md')];
    expect(blocks.length).toBeGreaterThan(1);
    expect(blocks.every((b) => b.querySelector('p') !== null)).toBe(true);
    unmount(app);
    flushSync();
    expect(blocks.map((b) => b.childNodes.length)).toEqual(blocks.map(() => 0));
  });
});
