// A setup file of the browser tests (vitest.config.ts): before a file drives Chromium, the test
// cluster's network must hold still. Chromium aborts every request in flight with
// net::ERR_NETWORK_CHANGED when an interface of the machine comes or goes, and each pod the
// Kubernetes suites start or stop adds or removes a veth on cni0; pods of a deleted namespace go on
// terminating after the suite that deleted it has finished. So this waits until no pod is starting
// or stopping and no namespace is being deleted, for a few seconds in a row. Without a test
// cluster it does nothing.
import { beforeAll } from 'vitest';
import { kubectl, testKubeconfig } from './kubernetes.ts';

const STILL_FOR_MS = 5_000;
const GIVE_UP_AFTER_MS = 180_000;

/** What is still changing: pods starting or stopping, namespaces being deleted. */
async function changing(): Promise<string[]> {
  const pods = JSON.parse(await kubectl(['get', 'pods', '--all-namespaces', '-o', 'json'])).items as any[];
  const namespaces = JSON.parse(await kubectl(['get', 'namespaces', '-o', 'json'])).items as any[];
  return [
    ...pods.filter((p) => p.metadata.deletionTimestamp || p.status?.phase === 'Pending').map((p) => `pod ${p.metadata.namespace}/${p.metadata.name}`),
    ...namespaces.filter((n) => n.status?.phase === 'Terminating').map((n) => `namespace ${n.metadata.name}`),
  ];
}

export async function waitForQuietClusterNetwork(): Promise<void> {
  if (!testKubeconfig) return;
  const deadline = Date.now() + GIVE_UP_AFTER_MS;
  let stillSince = Date.now();
  for (;;) {
    const moving = await changing();
    if (moving.length > 0) stillSince = Date.now();
    else if (Date.now() - stillSince >= STILL_FOR_MS) return;
    if (Date.now() > deadline) {
      // The tests run all the same; their failures then name ERR_NETWORK_CHANGED.
      console.warn(`the test cluster's network did not settle in ${GIVE_UP_AFTER_MS / 1000} s: ${moving.slice(0, 5).join(', ')}`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

beforeAll(waitForQuietClusterNetwork, GIVE_UP_AFTER_MS + 30_000);
