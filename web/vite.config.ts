import { defineConfig } from 'vite';

// Preact's automatic JSX runtime through esbuild: no framework plugin is needed.
export default defineConfig({
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    sourcemap: false,
    // The CSP forbids inline scripts: never inline the module preload polyfill.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
  server: { proxy: { '/api': 'http://127.0.0.1:8080' } },
  test: { include: ['tests/unit/**/*.test.ts'], environment: 'node' },
} as any);
