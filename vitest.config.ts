import { defineConfig } from 'vitest/config';

// Restarts the test cluster's API server, which every Kubernetes suite uses: it runs alone, after
// all other files (projects with a higher groupOrder start once the lower ones have finished).
const ALONE = ['test/kubernetes/apiserver-restart.test.ts'];

export default defineConfig({
  test: {
    // Integration tests start real servers, databases and daemons; two cores share them.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['src/**/*.test.ts', 'devnode/**/*.test.ts', 'test/**/*.test.ts', 'client/**/*.test.ts'],
          exclude: ALONE,
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'alone', include: ALONE, sequence: { groupOrder: 1 } } },
    ],
  },
});
