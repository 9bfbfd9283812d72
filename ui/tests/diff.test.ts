// The diff model (jsdiff underneath), the highlighter's line splitting and lazy loading, and
// DiffView as a user meets it: counts, line numbers, folds, split view, colours after paint,
// and hostile file contents staying text.
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it } from 'vitest';
import { diffRows, diffTexts, parseUnifiedPatch, sideTexts, splitRows } from '$lib/diff';
import { highlighterLoaded, highlightLater, highlightNow, languageOf, loadHighlighter, normalizeLang, splitHighlightedLines } from '$lib/highlight';

const { default: DiffView } = await import('$lib/components/changes/DiffView.svelte');

const PATCH = `Index: /repo/src/app.ts
===================================================================
--- /repo/src/app.ts
+++ /repo/src/app.ts
@@ -1,4 +1,4 @@
 const a = 1;
-const b = 2;
+const b = 3;
 const c = 4;
 const d = 5;
@@ -20,3 +20,4 @@
 x();
 y();
+z();
 end();
`;

describe('diff model', () => {
  it('parses a unified patch into numbered lines, counts and gaps', () => {
    const [file] = parseUnifiedPatch(PATCH);
    expect(file.newPath).toBe('/repo/src/app.ts');
    expect(file.added).toBe(2);
    expect(file.removed).toBe(1);
    const del = file.hunks[0].lines.find((l) => l.kind === 'del');
    const add = file.hunks[0].lines.find((l) => l.kind === 'add');
    expect(del).toMatchObject({ oldNo: 2, newNo: null, text: 'const b = 2;' });
    expect(add).toMatchObject({ oldNo: null, newNo: 2, text: 'const b = 3;' });
    // Lines 5..19 of the old file are between the hunks.
    expect(file.hunks[1].hiddenBefore).toBe(15);
    const rows = diffRows(file);
    expect(rows.filter((r) => r.type === 'gap')).toEqual([{ type: 'gap', hidden: 15, header: '@@ -20,3 +20,4 @@' }]);
  });

  it('hides nothing before a new file or an insertion at the top, and counts what a later insertion skips', () => {
    const [created] = parseUnifiedPatch('--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1,2 @@\n+one\n+two\n');
    expect(created.hunks[0].hiddenBefore).toBe(0);
    expect(diffRows(created).some((r) => r.type === 'gap')).toBe(false);
    // Two lines inserted after old line 5: old lines 1..5 come before it, unseen.
    const [later] = parseUnifiedPatch('--- a/x.txt\n+++ b/x.txt\n@@ -5,0 +6,2 @@\n+six\n+seven\n');
    expect(later.hunks[0].hiddenBefore).toBe(5);
  });

  it('gives no files for text that is no patch', () => {
    expect(parseUnifiedPatch('Edit applied successfully.')).toEqual([]);
    expect(parseUnifiedPatch('')).toEqual([]);
  });

  it('diffs two texts and folds a long unchanged run, keeping context around changes', () => {
    const before = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    const after = before.replace('line 20\n', 'line twenty\n');
    const file = diffTexts(before, after, 'notes.txt');
    expect([file.added, file.removed]).toEqual([1, 1]);
    const rows = diffRows(file);
    const folds = rows.filter((r) => r.type === 'fold');
    expect(folds).toHaveLength(2);
    // 19 unchanged lines before the change: 3 kept next to it, 16 folded; same after.
    expect(folds.map((f) => (f.type === 'fold' ? f.lines.length : 0))).toEqual([16, 17]);
    const shown = rows.filter((r) => r.type === 'line').map((r) => (r.type === 'line' ? r.line.text : ''));
    expect(shown).toEqual(['line 17', 'line 18', 'line 19', 'line 20', 'line twenty', 'line 21', 'line 22', 'line 23']);
    const first = folds[0];
    const opened = diffRows(file, new Set([first.type === 'fold' ? first.id : '']));
    expect(opened.filter((r) => r.type === 'fold')).toHaveLength(1);
  });

  it('keeps short unchanged runs open', () => {
    const file = diffTexts('a\nb\nc\n', 'a\nB\nc\n');
    expect(diffRows(file).every((r) => r.type === 'line')).toBe(true);
  });

  it('pairs removed and added lines side by side in the split view', () => {
    const file = diffTexts('a\nb\nc\nd\n', 'a\nB\nC\nX\nd\n');
    const pairs = splitRows(diffRows(file));
    const changed = pairs.filter((p) => p.type === 'pair' && p.left !== p.right);
    expect(changed.map((p) => (p.type === 'pair' ? [p.left?.text ?? null, p.right?.text ?? null] : []))).toEqual([
      ['b', 'B'],
      ['c', 'C'],
      [null, 'X'],
    ]);
  });

  it('rebuilds each side of the change for highlighting in one go', () => {
    const [file] = parseUnifiedPatch(PATCH);
    const sides = sideTexts(file);
    expect(sides.old.split('\n')).toEqual(['const a = 1;', 'const b = 2;', 'const c = 4;', 'const d = 5;', 'x();', 'y();', 'end();']);
    expect(sides.new.split('\n')).toContain('z();');
  });

  it('gives up on texts too different to compare in time, showing them removed then added', () => {
    const a = Array.from({ length: 4000 }, (_, i) => `a${i}`).join('\n');
    const b = Array.from({ length: 4000 }, (_, i) => `b${i}`).join('\n');
    const start = performance.now();
    const file = diffTexts(a, b, 'big.txt');
    expect(performance.now() - start).toBeLessThan(400);
    expect(file.approximate).toBe(true);
    expect([file.added, file.removed]).toEqual([4000, 4000]);
  });

  it('diffs a new file (nothing before) as all added', () => {
    const file = diffTexts('', 'one\ntwo\n', 'new.md');
    expect([file.added, file.removed, file.approximate]).toEqual([2, 0, false]);
  });
});

describe('highlighter', () => {
  it('picks languages by file name and fence info', () => {
    expect(languageOf('src/lib/a.ts')).toBe('typescript');
    expect(languageOf('C:\\x\\main.rs')).toBe('rust');
    expect(languageOf('Makefile')).toBe('makefile');
    expect(languageOf('README')).toBe('');
    expect(normalizeLang('TS {1,3}')).toBe('ts');
    expect(normalizeLang('"><img')).toBe('');
  });

  it('splits highlighted HTML into lines that are well-formed on their own', () => {
    const html = '<span class="hljs-comment">/* a\nb */</span> x\n<span class="hljs-string">"s"</span>';
    expect(splitHighlightedLines(html)).toEqual([
      '<span class="hljs-comment">/* a</span>',
      '<span class="hljs-comment">b */</span> x',
      '<span class="hljs-string">"s"</span>',
    ]);
  });

  it('loads lazily and escapes the code it colours', async () => {
    const code = 'const s = "<img src=x onerror=alert(1)>";';
    // Nothing known yet and nothing loaded on a bare question.
    expect(highlightNow(code, 'ts')).toBe(highlighterLoaded() ? expect.anything() : undefined);
    const html = await highlightLater(code, 'ts');
    expect(highlighterLoaded()).toBe(true);
    expect(html).toContain('hljs-keyword');
    const div = document.createElement('div');
    div.innerHTML = html ?? '';
    expect(div.querySelector('img')).toBeNull();
    expect(div.textContent).toBe(code);
    // A second ask is answered from the cache, synchronously.
    expect(highlightNow(code, 'ts')).toBe(html);
    expect(await highlightLater('x', 'no-such-language')).toBeNull();
  });
});

describe('DiffView', () => {
  let app: ReturnType<typeof mount> | null = null;
  afterEach(() => {
    if (app) unmount(app);
    app = null;
    document.body.innerHTML = '';
  });

  function render(props: Record<string, unknown>) {
    const target = document.createElement('div');
    document.body.appendChild(target);
    app = mount(DiffView, { target, props: props as never });
    flushSync();
    return target;
  }

  async function settle(target: HTMLElement, selector: string) {
    for (let i = 0; i < 100 && !target.querySelector(selector); i++) {
      await new Promise((r) => setTimeout(r, 20));
      flushSync();
    }
  }

  it('shows a patch with counts, both line numbers and colours after paint', async () => {
    const target = render({ patch: PATCH });
    const file = target.querySelector('[data-testid="diff-file"]');
    expect(file?.getAttribute('data-path')).toBe('/repo/src/app.ts');
    expect(target.querySelector('[data-testid="diff-counts"]')?.textContent?.replace(/\s+/g, '')).toBe('+2−1');
    const lines = [...target.querySelectorAll('[data-testid="diff-line"]')];
    const add = lines.find((l) => l.getAttribute('data-kind') === 'add');
    expect([...(add?.querySelectorAll('td') ?? [])].map((td) => td.textContent)).toEqual(['', '2', '+', 'const b = 3;']);
    expect(target.textContent).toContain('15 lines not shown');
    await loadHighlighter();
    await settle(target, '.hljs-keyword');
    expect(target.querySelector('[data-kind="add"] .hljs-keyword')?.textContent).toBe('const');
  });

  it('folds long unchanged runs and opens them on click', () => {
    const before = Array.from({ length: 30 }, (_, i) => `l${i}`).join('\n') + '\n';
    const target = render({ before, after: before.replace('l15\n', 'L15\n'), path: 'a.txt' });
    const folds = target.querySelectorAll<HTMLButtonElement>('[data-testid="diff-fold"]');
    expect(folds).toHaveLength(2);
    expect(folds[0].textContent).toContain('Show 12 unchanged lines');
    const before1 = target.querySelectorAll('[data-testid="diff-line"]').length;
    folds[0].click();
    flushSync();
    expect(target.querySelectorAll('[data-testid="diff-line"]').length).toBe(before1 + 12);
    expect(target.querySelectorAll('[data-testid="diff-fold"]')).toHaveLength(1);
  });

  it('switches to the split view with the old and new line side by side', () => {
    const target = render({ before: 'a\nb\n', after: 'a\nc\n', path: 'x.txt' });
    target.querySelector<HTMLButtonElement>('[data-testid="diff-split"]')?.click();
    flushSync();
    expect(target.querySelector('[data-testid="diff-view"]')?.getAttribute('data-mode')).toBe('split');
    const cells = [...target.querySelectorAll('table.split tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim()));
    expect(cells).toContainEqual(['2', 'b', '2', 'c']);
    expect(target.querySelector('[data-testid="diff-split"]')?.getAttribute('aria-pressed')).toBe('true');
  });

  it('keeps hostile file contents as text, plain and coloured', async () => {
    const evil = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
    const target = render({ before: '', after: `${evil}\nconst a = "${evil}";\n`, path: 'evil.ts' });
    expect(target.querySelector('img, script')).toBeNull();
    await loadHighlighter();
    await settle(target, '.hljs-string');
    expect(target.querySelector('.hljs-string')).not.toBeNull();
    expect(target.querySelector('img, script')).toBeNull();
    expect(target.textContent).toContain(evil);
  });

  it('says so when there is nothing to show, and caps huge diffs with "Show all"', () => {
    let target = render({ patch: 'not a patch' });
    expect(target.querySelector('[data-testid="diff-empty"]')?.textContent).toBe('No changes.');
    unmount(app as ReturnType<typeof mount>);
    app = null;
    const after = Array.from({ length: 300 }, (_, i) => `n${i}`).join('\n');
    target = render({ before: '', after, path: 'big.txt', maxRows: 100 });
    expect(target.querySelectorAll('[data-testid="diff-line"]')).toHaveLength(100);
    target.querySelector<HTMLButtonElement>('[data-testid="diff-show-all"]')?.click();
    flushSync();
    expect(target.querySelectorAll('[data-testid="diff-line"]')).toHaveLength(300);
  });
});
