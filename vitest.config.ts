import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.{ts,tsx}'],
    // PGlite takes seconds to create on these 2-core machines (STACK.md).
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    environment: 'node',
    // test/desktop skips with one line where Electron cannot run (docs/desktop.md).
    globalSetup: ['test/global-setup.ts', 'test/desktop/global-setup.ts'],
  },
});
