// Markdown for assistant text: marked for parsing, DOMPurify for safety. Output carries no
// scripts, event handlers, inline styles, frames, `javascript:` URLs or remote images, posters
// and media; links open externally, in-page `#` links stay in the page.
// Long texts are split into blocks so streaming re-parses only the last block.

import DOMPurify from 'dompurify';
import { Marked, type Tokens } from 'marked';
import { codeCopyLabel } from './codeCopyLabel';
import { highlightLater } from './highlight';
import { idleScheduler, whenIdle } from './frames';

export { setCodeCopyLabel } from './codeCopyLabel';

/** Texts longer than this are shown as escaped plain text (parsing them could stall a frame). */
export const MARKDOWN_MAX = 200_000;

let purifier: ReturnType<typeof DOMPurify> | null = null;

function getPurifier(): ReturnType<typeof DOMPurify> {
  if (purifier) return purifier;
  const p = DOMPurify(window);
  // An in-page anchor keeps working without an `id` (stripped below): its target is kept as
  // `data-anchor`, which no script looks up by name.
  p.addHook('beforeSanitizeAttributes', (node) => {
    const id = node.getAttribute?.('id');
    if (id) node.setAttribute('data-anchor', id);
  });
  p.addHook('afterSanitizeAttributes', (node) => {
    if (node.nodeName === 'A') {
      const href = node.getAttribute('href') ?? '';
      if (/^\s*(https?:|mailto:)/i.test(href)) {
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer');
      } else if (!href.startsWith('#')) {
        node.removeAttribute('href');
      }
    }
    // Remote URLs that load by themselves would leak requests (the CSP blocks most, but not
    // every host has it): images, posters and backgrounds keep data: images only, and media
    // sources are dropped.
    for (const attr of ['src', 'poster', 'background']) {
      const value = node.getAttribute(attr);
      if (value === null) continue;
      const image = attr !== 'src' || node.nodeName === 'IMG';
      if (!image || !/^\s*data:image\//i.test(value)) node.removeAttribute(attr);
    }
    if (node.nodeName === 'IMG') node.setAttribute('loading', 'lazy');
    // GFM task lists: every input that survives is a disabled checkbox and nothing else.
    if (node.nodeName === 'INPUT') {
      const checked = node.hasAttribute('checked');
      for (const attr of [...node.attributes]) node.removeAttribute(attr.name);
      node.setAttribute('type', 'checkbox');
      node.setAttribute('disabled', '');
      if (checked) node.setAttribute('checked', '');
    }
  });
  // Parse the policy once; `sanitize(html)` without a config then reuses it.
  p.setConfig(SANITIZE);
  purifier = p;
  return p;
}

const SANITIZE = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'script', 'iframe', 'frame', 'frameset', 'object', 'embed', 'form', 'textarea', 'select', 'link', 'meta', 'base', 'svg', 'math'],
  // `id` and `name` would let a reply clobber the DOM (an element named `currentScript` or with
  // the id of one of ours shadows what the page's code looks up): no rendered element has either.
  FORBID_ATTR: ['style', 'srcset', 'formaction', 'action', 'xlink:href', 'id', 'name'],
  ALLOW_DATA_ATTR: false,
  ADD_ATTR: ['target', 'data-copy-code', 'data-anchor'],
};

function plainParagraphs(text: string): string {
  return text
    .split(/\n[ \t]*\n/)
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .map((p) => `<p>${escapeHtml(p)}</p>`)
    .join('');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    code(token: Tokens.Code): string {
      const lang = (token.lang ?? '').split(/\s/)[0];
      const cls = lang ? ` class="language-${escapeHtml(lang)}"` : '';
      const label = lang ? `<span class="code-lang">${escapeHtml(lang)}</span>` : '';
      return (
        `<div class="code-block"><div class="code-head">${label}` +
        `<button type="button" class="code-copy" data-copy-code="" aria-label="${escapeHtml(codeCopyLabel.aria)}">${escapeHtml(codeCopyLabel.label)}</button></div>` +
        `<pre><code${cls}>${escapeHtml(token.text)}</code></pre></div>`
      );
    },
  },
});

/** Markdown syntax (or HTML, entities, autolinks) that plain paragraphs never contain. */
const SYNTAX = /[\\`*_~#<>[\]|&!]|https?:|www\.|@|^ {0,3}(?:[-+=]|\d+[.)])(?:\s|$)|^ {0,3}(?:=+|-+)\s*$|^(?: {4}|\t)| {2,}\n/m;

/** Renders markdown to sanitized HTML. Never throws. */
export function renderMarkdown(text: string): string {
  if (!text) return '';
  if (text.length > MARKDOWN_MAX) return `<pre class="plain">${escapeHtml(text)}</pre>`;
  // Fast path: plain prose needs neither the parser nor the sanitizer.
  if (!SYNTAX.test(text)) return plainParagraphs(text);
  let html: string;
  try {
    html = marked.parse(verdictOnItsOwnLine(text), { async: false });
  } catch {
    return `<pre class="plain">${escapeHtml(text)}</pre>`;
  }
  return sanitize(html);
}

const VERDICT_LINE = /^\s*(?:\*\*|__)?verdict\s*:/i;
const FENCE = /^\s{0,3}(?:```|~~~)/;

/** A review's verdict line, written right under its findings list as reviewers do, starts a
 * paragraph of its own instead of running on as the last item's text (CommonMark's lazy
 * continuation). Lines inside fenced code stay as they are. */
export function verdictOnItsOwnLine(text: string): string {
  if (!/verdict\s*:/i.test(text)) return text;
  const lines = text.split('\n');
  let fenced = false;
  for (let i = 1; i < lines.length; i++) {
    if (FENCE.test(lines[i - 1])) fenced = !fenced;
    if (!fenced && VERDICT_LINE.test(lines[i]) && lines[i - 1].trim() !== '') lines[i] = `\n${lines[i]}`;
  }
  return lines.join('\n');
}

/** A reply with what replies carry (prose, emphasis, a list, a link, code, a quote, a table). */
const WARM_UP_SAMPLE =
  '# Title\n\nSome **bold** and *em* text with `code` and [a link](https://example.com).\n\n' +
  '- one\n- two\n\n1. first\n\n```ts\nconst a = 1;\n```\n\n> quoted\n\n| a | b |\n|---|---|\n| 1 | 2 |\n';

/** Renders a sample once when the page is idle after start: the parser's and the sanitizer's
 * code is compiled then, not in the task that opens the first session (that cold first render
 * cost a reply about three times a warm one). Needs `requestIdleCallback`; without it, nothing. */
export function warmUpMarkdown(): void {
  if (!idleScheduler() || typeof window === 'undefined') return;
  whenIdle(() => void renderMarkdown(WARM_UP_SAMPLE), 3000);
}

/** Rendered markdown by text (a part's revision, or one block of it), least recently used
 * first, with the code-copy label it was rendered with. */
const rendered = new Map<string, { html: string; label: string }>();
let renderedChars = 0;
/** How much text and html the cache keeps (characters): a few hundred replies, so a transcript
 * scrolled through from end to end does not keep every rendered reply for the app's lifetime. */
const RENDERED_MAX_CHARS = 1_500_000;
/** The same for coloured html, which replaces a text's rendered entry (it is what is shown). */
const COLOURED_MAX_CHARS = 1_500_000;

/** `renderMarkdown`, answered from a cache when this text was rendered before: a row that
 * scrolls back into view or a transcript opened again costs no parse and no sanitize. */
export function renderMarkdownCached(text: string): string {
  const hit = rendered.get(text);
  if (hit && hit.label === codeCopyLabel.label) {
    rendered.delete(text);
    rendered.set(text, hit);
    return hit.html;
  }
  const html = renderMarkdown(text);
  if (hit) renderedChars -= text.length + hit.html.length;
  rendered.delete(text);
  rendered.set(text, { html, label: codeCopyLabel.label });
  renderedChars += text.length + html.length;
  for (const [key, entry] of rendered) {
    if (renderedChars <= RENDERED_MAX_CHARS) break;
    rendered.delete(key);
    renderedChars -= key.length + entry.html.length;
  }
  return html;
}

/** Drops a text's rendered html (its coloured html took its place). */
function forgetRendered(text: string): void {
  const hit = rendered.get(text);
  if (!hit) return;
  rendered.delete(text);
  renderedChars -= text.length + hit.html.length;
}

/** Characters the rendered and the coloured markdown caches hold (for tests and benches). */
export function markdownCacheChars(): { rendered: number; coloured: number } {
  return { rendered: renderedChars, coloured: colouredChars };
}

/** Sanitizes HTML with the markdown policy. */
export function sanitize(html: string): string {
  return getPurifier().sanitize(html);
}

/** Splits a text into blocks of at least `min` characters, cut only at blank lines outside
 * code fences, so every block but the last stays unchanged while text streams in. */
export function splitBlocks(text: string, min = BLOCK_MIN): string[] {
  if (text.length <= min) return [text];
  const cuts = scanCuts(text, 0, min);
  const blocks: string[] = [];
  let start = 0;
  for (const cut of cuts) {
    blocks.push(text.slice(start, cut));
    start = cut;
  }
  if (start < text.length) blocks.push(text.slice(start));
  return blocks;
}

export const BLOCK_MIN = 3000;

/** Offsets where blocks end, scanning from `from` (which must be a block start). */
function scanCuts(text: string, from: number, min: number): number[] {
  const cuts: number[] = [];
  let start = from;
  let inFence = false;
  let fence = '';
  let pos = from;
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    if (nl < 0) break; // an unfinished last line never ends a block
    const line = text.slice(pos, nl);
    const m = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (m) {
      if (!inFence) {
        inFence = true;
        fence = m[1];
      } else if (m[1][0] === fence[0] && m[1].length >= fence.length && line.trim() === m[1]) {
        inFence = false;
      }
    }
    if (!inFence && nl - start >= min && line.trim() === '') {
      cuts.push(nl + 1);
      start = nl + 1;
    }
    pos = nl + 1;
  }
  return cuts;
}

/** Incremental splitter for streamed text: when the new text extends the old one, scanning
 * resumes at the last block instead of the start, and earlier blocks keep their identity. */
export class BlockSplitter {
  private closed: string[] = [];
  private closedLength = 0;
  private text = '';
  private readonly min: number;

  constructor(min = BLOCK_MIN) {
    this.min = min;
  }

  split(text: string): string[] {
    const extends_ = text.length >= this.closedLength && this.closedLength > 0 && text.startsWith(this.text.slice(0, this.closedLength));
    if (!extends_) {
      this.closed = [];
      this.closedLength = 0;
    }
    this.text = text;
    if (text.length - this.closedLength > this.min) {
      let start = this.closedLength;
      for (const cut of scanCuts(text, start, this.min)) {
        this.closed.push(text.slice(start, cut));
        start = cut;
      }
      this.closedLength = start;
    }
    const tail = text.slice(this.closedLength);
    return tail ? [...this.closed, tail] : [...this.closed];
  }
}

// Colours for code blocks, added after the first paint: the block is shown plain at once, and
// its coloured HTML replaces it when the lazily loaded highlighter has done it in idle slices.
// The coloured HTML is cached per text, so a row that scrolls back in comes coloured at once.

const CODE_BLOCK = /<pre><code class="language-([^"]+)">([^<]*)<\/code><\/pre>/g;
const coloured = new Map<string, string>();
let colouredChars = 0;

/** Whether rendered markdown has a code block with a language to colour. */
export function hasColourableCode(html: string): boolean {
  return html.includes('<pre><code class="language-');
}

/** The coloured HTML of a text's markdown, when it was coloured before. */
export function colouredMarkdown(text: string): string | undefined {
  return coloured.get(text);
}

/** Colours the code blocks of `html` (the sanitized rendering of `text`) with the lazily loaded
 * highlighter, one block per idle slice; null when nothing could be coloured. highlight.js
 * escapes the code it is given and adds only `<span class="hljs-…">`, so the result is as safe
 * as the sanitized input. */
export async function colourMarkdown(text: string, html: string): Promise<string | null> {
  const hit = coloured.get(text);
  if (hit !== undefined) return hit;
  const blocks = [...html.matchAll(CODE_BLOCK)];
  if (blocks.length === 0) return null;
  const results = await Promise.all(blocks.map((m) => highlightLater(decodeEntities(m[2]), m[1])));
  if (results.every((r) => r === null)) return null;
  let i = 0;
  const out = html.replace(CODE_BLOCK, (whole, lang: string) => {
    const r = results[i++];
    return r === null || r === undefined ? whole : `<pre><code class="language-${lang} hljs">${r}</code></pre>`;
  });
  const was = coloured.get(text);
  if (was !== undefined) colouredChars -= text.length + was.length;
  coloured.set(text, out);
  colouredChars += text.length + out.length;
  // One copy per text: a block shows its coloured html from now on.
  forgetRendered(text);
  for (const [key, value] of coloured) {
    if (colouredChars <= COLOURED_MAX_CHARS) break;
    coloured.delete(key);
    colouredChars -= key.length + value.length;
  }
  return out;
}

/** Text of serialized HTML text content (the entities a serializer writes back). */
function decodeEntities(html: string): string {
  return html.replace(/&(?:#(\d+)|#x([0-9a-f]+)|(amp|lt|gt|quot|apos|nbsp));/gi, (whole, dec: string, hex: string, name: string) => {
    if (dec) return String.fromCodePoint(Number(dec));
    if (hex) return String.fromCodePoint(parseInt(hex, 16));
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };
    return named[name.toLowerCase()] ?? whole;
  });
}
