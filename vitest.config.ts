import { defineConfig } from 'vitest/config';

// Restarts the test cluster's API server, which every Kubernetes suite uses: it runs alone, after
// all other files (projects with a higher groupOrder start once the lower ones have finished).
const ALONE = ['test/kubernetes/apiserver-restart.test.ts'];
// Deploy the service into the test cluster's fixed namespaces (rln-cloud, rln-nodes), as the guide
// does, and delete them first: they run after the suite, one at a time, never beside each other.
const DEPLOYING = ['test/deploy/service-on-cluster.test.ts', 'test/deploy/guide-recipe.test.ts'];
// Drive Chromium, which aborts every request in flight (net::ERR_NETWORK_CHANGED) when the machine's
// network changes, as it does each time the Kubernetes suites start or stop a pod (its veth on
// cni0): they run after the suite, beside each other only, and each file first waits until the
// pods the suite left terminating are gone (test/helpers/quiet-cluster-network.ts).
const BROWSER = ['test/web/*-browser.test.ts', 'test/web/browser.test.ts'];

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
          exclude: [...ALONE, ...DEPLOYING, ...BROWSER],
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'browser', include: BROWSER, setupFiles: ['test/helpers/quiet-cluster-network.ts'], sequence: { groupOrder: 1 } } },
      { extends: true, test: { name: 'deploy-1', include: DEPLOYING.slice(0, 1), sequence: { groupOrder: 2 } } },
      { extends: true, test: { name: 'deploy-2', include: DEPLOYING.slice(1), sequence: { groupOrder: 3 } } },
      { extends: true, test: { name: 'alone', include: ALONE, sequence: { groupOrder: 4 } } },
    ],
  },
});
