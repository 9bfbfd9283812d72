// Syntax highlighting, loaded lazily: the engine (highlight.js and its grammars) is a separate
// chunk fetched the first time something asks for colours, never during the first paint.
// Everything here answers from a cache when it can and otherwise schedules the work in idle
// slices, so a long transcript never runs one long main-thread task for colours.

import './theme.css';
import { whenIdle } from '../frames';

type Engine = typeof import('./highlighter');

let engine: Engine | null = null;
let loading: Promise<Engine | null> | null = null;

/** Loads the highlighter (once); resolves to null when the chunk cannot be loaded. */
export function loadHighlighter(): Promise<Engine | null> {
  if (engine) return Promise.resolve(engine);
  loading ??= import('./highlighter').then(
    (e) => (engine = e),
    () => {
      loading = null;
      return null;
    },
  );
  return loading;
}

/** Whether the highlighter has been loaded (the chunk is in memory). */
export function highlighterLoaded(): boolean {
  return engine !== null;
}

/** Highlighted HTML per language and code, least recently used first. */
const cache = new Map<string, string | null>();
let cachedChars = 0;
const CACHE_MAX_CHARS = 1_000_000;
/** Longer code is left plain: colours are not worth a long task. */
export const HIGHLIGHT_MAX = 100_000;

function remember(key: string, html: string | null): void {
  cache.delete(key);
  cache.set(key, html);
  cachedChars += key.length + (html?.length ?? 0);
  for (const [k, v] of cache) {
    if (cachedChars <= CACHE_MAX_CHARS) break;
    cache.delete(k);
    cachedChars -= k.length + (v?.length ?? 0);
  }
}

/** Highlighted HTML of `code` if it is already known (or the engine is loaded and the code is
 * short enough to do now); `undefined` when it needs `highlightLater`; null when it stays plain. */
export function highlightNow(code: string, lang: string, budgetChars = 0): string | null | undefined {
  const name = normalizeLang(lang);
  if (!name || code.length > HIGHLIGHT_MAX) return null;
  const key = `${name}\u0000${code}`;
  if (cache.has(key)) {
    const hit = cache.get(key) ?? null;
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  if (!engine || code.length > budgetChars) return undefined;
  const html = engine.highlight(code, name);
  remember(key, html);
  return html;
}

/** Highlights `code` after the first paint, in an idle slice; resolves to its HTML (text
 * escaped, tokens in `hljs-*` spans) or null when the language is unknown. */
export async function highlightLater(code: string, lang: string): Promise<string | null> {
  const now = highlightNow(code, lang);
  if (now !== undefined) return now;
  const e = await loadHighlighter();
  if (!e) return null;
  return inIdleSlice(() => highlightNow(code, lang, Number.MAX_SAFE_INTEGER) ?? null);
}

/** A language name from a code fence's info string, lower case, or '' for none. */
export function normalizeLang(lang: string): string {
  const name = lang.trim().split(/[\s{]/)[0].toLowerCase();
  return /^[a-z0-9_+#.-]{1,32}$/.test(name) ? name : '';
}

const EXTENSIONS: Record<string, string> = {
  ts: 'typescript',
  tsx: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  json: 'json',
  jsonc: 'json',
  rs: 'rust',
  py: 'python',
  go: 'go',
  java: 'java',
  kt: 'kotlin',
  swift: 'swift',
  c: 'c',
  h: 'c',
  cc: 'cpp',
  cpp: 'cpp',
  hpp: 'cpp',
  css: 'css',
  scss: 'scss',
  html: 'xml',
  xml: 'xml',
  svg: 'xml',
  svelte: 'xml',
  vue: 'xml',
  md: 'markdown',
  markdown: 'markdown',
  yml: 'yaml',
  yaml: 'yaml',
  toml: 'ini',
  ini: 'ini',
  sh: 'bash',
  bash: 'bash',
  zsh: 'bash',
  sql: 'sql',
  rb: 'ruby',
  php: 'php',
  diff: 'diff',
  patch: 'diff',
};

/** The language of a file by its name, or '' when unknown. */
export function languageOf(path: string): string {
  const name = path.split(/[\\/]/).pop()?.toLowerCase() ?? '';
  if (name === 'dockerfile') return 'dockerfile';
  if (name === 'makefile' || name === 'gnumakefile') return 'makefile';
  const dot = name.lastIndexOf('.');
  return dot > 0 ? (EXTENSIONS[name.slice(dot + 1)] ?? '') : '';
}

/** Splits highlighted HTML into lines, closing the spans open at each line's end and reopening
 * them on the next, so every line is well-formed on its own. */
export function splitHighlightedLines(html: string): string[] {
  const lines: string[] = [];
  const open: string[] = [];
  let line = '';
  const re = /<span[^>]*>|<\/span>|\n/g;
  let last = 0;
  for (let m = re.exec(html); m; m = re.exec(html)) {
    line += html.slice(last, m.index);
    last = m.index + m[0].length;
    if (m[0] === '\n') {
      lines.push(line + '</span>'.repeat(open.length));
      line = open.join('');
    } else if (m[0] === '</span>') {
      open.pop();
      line += m[0];
    } else {
      open.push(m[0]);
      line += m[0];
    }
  }
  line += html.slice(last);
  lines.push(line + '</span>'.repeat(open.length));
  return lines;
}

// Idle slices: jobs queued here run synchronously a few milliseconds at a time, after paint,
// so a screenful of code blocks never becomes one long task.
const SLICE_MS = 6;
const jobs: (() => void)[] = [];
let scheduled = false;

/** Runs `fn` in an idle slice after the next paint and resolves to its result. */
export function inIdleSlice<T>(fn: () => T): Promise<T> {
  return new Promise((resolve, reject) => {
    jobs.push(() => {
      try {
        resolve(fn());
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
    schedule();
  });
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  const run = () => {
    scheduled = false;
    const start = performance.now();
    while (jobs.length > 0 && performance.now() - start < SLICE_MS) jobs.shift()?.();
    if (jobs.length > 0) schedule();
  };
  whenIdle(run, 500);
}
