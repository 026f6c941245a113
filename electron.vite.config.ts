import react from '@vitejs/plugin-react';
import { defineConfig } from 'electron-vite';

// Entries are electron-vite's defaults: src/main/index.ts, src/preload/index.ts,
// src/renderer/index.html. See STACK.md for why the preload is CommonJS.
export default defineConfig({
  main: {},
  preload: {
    build: {
      rolldownOptions: { output: { format: 'cjs', entryFileNames: '[name].cjs' } },
    },
  },
  renderer: {
    plugins: [react()],
    // electron-vite leaves bundles unminified by default; the browser UI loads this over HTTP.
    build: { minify: true },
  },
});
