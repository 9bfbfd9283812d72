import { fileURLToPath, URL } from 'node:url';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { defineConfig } from 'vitest/config';

// One bundle for both hosts: `tauri://localhost` (desktop) and `http://127.0.0.1:N/` (web mode),
// hence the relative base.
export default defineConfig({
  base: './',
  plugins: [svelte()],
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
