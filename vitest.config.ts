import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'devnode/**/*.test.ts', 'test/**/*.test.ts'],
    // Integration tests start real servers, databases and daemons; two cores share them.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
