import { fileURLToPath, URL } from 'node:url';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import type { Plugin } from 'vite';
import { defineConfig } from 'vitest/config';

/** The page's first script is its own entry (src/early.ts): it asks the snapshot as soon as
 * it is loaded, while the app's larger script is still loading (scripts of one entry run only
 * once all of it is there). The build puts it in the page, `async` (it waits neither for the
 * page's style sheets nor for the app); the module they share (host/early.ts) is one instance,
 * which hands the request over. */
function earlyScript(): Plugin {
  return {
    name: 'crosscheck-early-script',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler(html, ctx) {
        const early = Object.values(ctx.bundle ?? {}).find(
          (c) => c.type === 'chunk' && c.isEntry && c.facadeModuleId?.endsWith('/src/early.ts'),
        );
        if (!early) throw new Error('the build has no chunk for src/early.ts');
        const src = `./${early.fileName}`;
        // The app imports it too (they share its module): a tag of the build's for it goes.
        const without = html.replace(new RegExp(`\\s*<script type="module" crossorigin src="${src.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"></script>`, 'g'), '');
        return {
          html: without,
          tags: [{ tag: 'script', attrs: { type: 'module', async: true, crossorigin: true, src }, injectTo: 'head-prepend' }],
        };
      },
    },
  };
}

/** The first screen in two files: the first script's modules (`early`), and every module the
 * app imports statically (`index`), instead of a dozen small files that the lazily loaded
 * parts share with it (each one more request before the app can start). */
function firstScreenChunks() {
  const closures = new Map<string, Set<string>>();
  return (id: string, meta: { getModuleInfo: (id: string) => { importedIds: readonly string[] } | null }) => {
    const closure = (entry: string) => {
      let found = closures.get(entry);
      if (found) return found;
      found = new Set<string>();
      const stack = [entry];
      while (stack.length > 0) {
        const next = stack.pop() as string;
        if (found.has(next)) continue;
        found.add(next);
        stack.push(...(meta.getModuleInfo(next)?.importedIds ?? []));
      }
      closures.set(entry, found);
      return found;
    };
    const early = closure(fileURLToPath(new URL('./src/early.ts', import.meta.url)));
    if (early.has(id)) return 'early';
    if (closure(fileURLToPath(new URL('./src/main.ts', import.meta.url))).has(id)) return 'index';
    return undefined;
  };
}

export default defineConfig({
  base: './',
  plugins: [svelte(), earlyScript()],
  resolve: {
    alias: { $lib: fileURLToPath(new URL('./src/lib', import.meta.url)) },
    // Tests run in jsdom: resolve Svelte's browser runtime there too.
    ...(process.env.VITEST ? { conditions: ['browser'] } : {}),
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 800,
    rollupOptions: {
      input: { index: fileURLToPath(new URL('./index.html', import.meta.url)), early: fileURLToPath(new URL('./src/early.ts', import.meta.url)) },
      output: { manualChunks: firstScreenChunks() },
    },
  },
  server: {
    port: 5173,
    strictPort: true,
    // Web-mode development against a running backend (`crosscheck serve` or the mock):
    // CROSSCHECK_API=http://127.0.0.1:PORT npm run dev
    ...(process.env.CROSSCHECK_API ? { proxy: { '/api': { target: process.env.CROSSCHECK_API, changeOrigin: true } } } : {}),
  },
  clearScreen: false,
  test: {
    environment: 'jsdom',
    include: ['tests/**/*.test.ts', 'src/**/*.test.ts'],
  },
});
