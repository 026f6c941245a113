import { defineConfig } from 'vitest/config';

// `npm run test:desktop` (scripts/test-desktop.js): the real desktop window suite alone. The same
// files also run in `npm test`, where they skip with one line when Electron cannot run (docs/desktop.md).
export default defineConfig({
  test: {
    include: ['test/desktop/**/*.test.ts'],
    // An Electron app is a browser, a Node process and a database: one at a time.
    maxWorkers: 1,
    fileParallelism: false,
    pool: 'forks',
    testTimeout: 180_000,
    hookTimeout: 180_000,
    environment: 'node',
    globalSetup: ['test/desktop/global-setup.ts'],
  },
});
