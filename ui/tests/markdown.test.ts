import { describe, expect, it } from 'vitest';
import { BlockSplitter, MARKDOWN_MAX, renderMarkdown, splitBlocks, verdictOnItsOwnLine } from '$lib/markdown';

function dom(html: string): HTMLElement {
  const div = document.createElement('div');
  div.innerHTML = html;
  return div;
}

describe('renderMarkdown', () => {
  it('renders common markdown', () => {
    const el = dom(renderMarkdown('# Title\n\nSome **bold** and `code`.\n\n- a\n- b\n\n| x | y |\n|---|---|\n| 1 | 2 |'));
    expect(el.querySelector('h1')?.textContent).toBe('Title');
    expect(el.querySelector('strong')?.textContent).toBe('bold');
    expect(el.querySelectorAll('li')).toHaveLength(2);
    expect(el.querySelector('table')).not.toBeNull();
  });

  it('drops scripts', () => {
    const el = dom(renderMarkdown('hi <script>alert(1)</script> there\n\n<script src="x.js"></script>'));
    expect(el.querySelector('script')).toBeNull();
    expect(el.innerHTML).not.toContain('alert(1)');
  });

  it('drops event handlers', () => {
    const html = renderMarkdown('<img src="x" onerror="alert(1)"> <a href="https://e.com" onclick="alert(2)">x</a> <div onmouseover="alert(3)">y</div>');
    const el = dom(html);
    for (const node of el.querySelectorAll('*')) {
      for (const attr of node.attributes) expect(attr.name.startsWith('on')).toBe(false);
    }
    expect(html).not.toContain('alert(');
  });

  it('drops javascript: and other unsafe URLs', () => {
    const el = dom(
      renderMarkdown('[a](javascript:alert(1)) [b](JaVaScRiPt:alert(2)) [c](data:text/html,<script>alert(3)</script>) <a href="vbscript:x">d</a>'),
    );
    for (const a of el.querySelectorAll('a')) {
      const href = a.getAttribute('href') ?? '';
      expect(/^\s*(javascript|vbscript|data):/i.test(href)).toBe(false);
    }
  });

  it('opens links externally with noopener', () => {
    const a = dom(renderMarkdown('[site](https://example.com/path)')).querySelector('a');
    expect(a?.getAttribute('href')).toBe('https://example.com/path');
    expect(a?.getAttribute('target')).toBe('_blank');
    expect(a?.getAttribute('rel')).toContain('noopener');
  });

  it('drops iframes, objects, forms, styles and inline style attributes', () => {
    const el = dom(
      renderMarkdown(
        '<iframe src="https://evil.example"></iframe><object data="x"></object><embed src="y"><form action="z"><input></form><style>body{display:none}</style><p style="color:red">p</p><svg><script>1</script></svg>',
      ),
    );
    for (const tag of ['iframe', 'object', 'embed', 'form', 'style', 'svg', 'script']) {
      expect(el.querySelector(tag)).toBeNull();
    }
    // Inputs stay only as the disabled checkboxes of task lists.
    expect([...el.querySelectorAll('input')].map((i) => i.outerHTML)).toEqual(['<input type="checkbox" disabled="">']);
    expect(el.querySelector('[style]')).toBeNull();
  });

  it('escapes code blocks and gives them a copy button', () => {
    const el = dom(renderMarkdown('```html\n<script>alert(1)</script>\n```'));
    expect(el.querySelector('script')).toBeNull();
    expect(el.querySelector('pre code')?.textContent).toContain('<script>alert(1)</script>');
    expect(el.querySelector('[data-copy-code]')).not.toBeNull();
    expect(el.querySelector('.code-lang')?.textContent).toBe('html');
  });

  it('does not throw on huge or pathological input', () => {
    const huge = 'word '.repeat(MARKDOWN_MAX / 4);
    expect(() => renderMarkdown(huge)).not.toThrow();
    expect(renderMarkdown(huge)).toContain('<pre class="plain">');
    const deep = '>'.repeat(5000) + ' quote\n' + '['.repeat(5000) + '\n' + '*'.repeat(20000);
    expect(() => renderMarkdown(deep)).not.toThrow();
    expect(renderMarkdown('')).toBe('');
  });
});

describe('splitBlocks', () => {
  it('keeps short texts whole', () => {
    expect(splitBlocks('a\n\nb', 100)).toEqual(['a\n\nb']);
  });

  it('cuts at blank lines outside code fences and loses nothing', () => {
    const para = 'x'.repeat(40);
    const text = [para, para, '```', para, '', para, '```', para, para].join('\n\n');
    const blocks = splitBlocks(text, 50);
    expect(blocks.join('')).toBe(text);
    expect(blocks.length).toBeGreaterThan(1);
    // No block boundary falls inside the fence: each block has an even number of fences.
    for (const b of blocks) expect((b.match(/```/g) ?? []).length % 2).toBe(0);
  });

  it('the incremental splitter matches the one-shot split and reuses closed blocks', () => {
    const splitter = new BlockSplitter(30);
    let text = '';
    let previous: string[] = [];
    for (let i = 0; i < 200; i++) {
      text += i % 7 === 0 ? '\n\n' : `w${i} `;
      const blocks = splitter.split(text);
      expect(blocks.join('')).toBe(text);
      expect(blocks).toEqual(splitBlocks(text, 30));
      for (let j = 0; j < previous.length - 1; j++) expect(blocks[j]).toBe(previous[j]);
      previous = blocks;
    }
    // A replaced (not extended) text starts over.
    expect(splitter.split('fresh')).toEqual(['fresh']);
  });
});

describe('plain prose fast path', () => {
  it('renders the same text as the full parser', async () => {
    const { Marked } = await import('marked');
    const reference = new Marked({ gfm: true, breaks: false });
    const samples = [
      'Hello world',
      'Two\nlines in one paragraph.\n\nAnd a second paragraph.',
      'Numbers like 3.5 and 10 percent, commas, and (parentheses); fine?',
      '  indented by two\n\n\n\nmany blank lines  ',
    ];
    // Whitespace at the edges of a paragraph does not render.
    const norm = (html: string) => html.replace(/\s+/g, ' ').replace(/> </g, '><').replace(/<p> /g, '<p>').replace(/ <\/p>/g, '</p>').trim();
    for (const sample of samples) {
      expect(norm(renderMarkdown(sample))).toBe(norm(reference.parse(sample, { async: false })));
    }
  });
});

describe('remote resources', () => {
  it('drops remote poster and background URLs as it does remote image sources', () => {
    const el = dom(
      renderMarkdown(
        '<video poster="https://tracker.example/p.png" src="https://tracker.example/v.mp4"><source src="https://tracker.example/s.mp4"></video>' +
          '<table background="https://tracker.example/bg.png"><tr><td background="http://tracker.example/td.png">x</td></tr></table>' +
          '<img src="https://tracker.example/i.png"> <img src="data:image/png;base64,AAAA">',
      ),
    );
    expect(el.innerHTML).not.toContain('tracker.example');
    expect(el.querySelector('img[src^="data:image/png"]')).not.toBeNull();
  });
});

describe('a review verdict under its findings', () => {
  it('starts a paragraph of its own instead of running on in the last item', () => {
    const html = renderMarkdown('FINDINGS\n- [F1] major src/a.rs:3 — panics\n- [F2] nit src/a.rs:1 — doc\nVERDICT: FLAGS (2)');
    expect(html).toMatch(/<\/ul>\s*<p>VERDICT: FLAGS \(2\)<\/p>/);
    expect(html).not.toMatch(/doc\s*VERDICT/);
  });

  it('keeps bold verdicts and leaves code blocks alone', () => {
    expect(renderMarkdown('- [F1] FIXED\n**VERDICT: CLEAN**')).toMatch(/<\/ul>\s*<p><strong>VERDICT: CLEAN<\/strong><\/p>/);
    expect(verdictOnItsOwnLine('```\nx\nVERDICT: CLEAN\n```')).toBe('```\nx\nVERDICT: CLEAN\n```');
    expect(verdictOnItsOwnLine('a\n\nVERDICT: CLEAN')).toBe('a\n\nVERDICT: CLEAN');
  });
});

describe('DOM clobbering', () => {
  it('strips id and name attributes, so a reply cannot shadow globals or form fields', () => {
    const html = renderMarkdown(
      '<a id="cookie" href="https://e.com">a</a> <img name="getElementById" id="x" src="data:image/png;base64,AA==">\n\n<div id="body" name="currentScript">d</div>\n\n<p><span ID="location">s</span></p>',
    );
    const el = dom(html);
    for (const node of el.querySelectorAll('*')) {
      expect(node.hasAttribute('id'), `${node.nodeName} keeps no id`).toBe(false);
      expect(node.hasAttribute('name'), `${node.nodeName} keeps no name`).toBe(false);
    }
    // The elements themselves and their text stay.
    expect(el.querySelector('a')?.textContent).toBe('a');
    expect(el.querySelector('span')?.textContent).toBe('s');
  });
});
