// The project's test cluster (scripts/test-cluster.sh up) as the Kubernetes tests see it: its
// kubeconfig from TEST_KUBECONFIG, a namespace of their own per suite, and kubectl to look at what
// the service created. Without TEST_KUBECONFIG the suites skip, unless REQUIRE_KUBERNETES_TESTS=1
// (CI), where a missing cluster fails the run.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { describe } from 'vitest';

export const testKubeconfig = process.env.TEST_KUBECONFIG || undefined;
if (!testKubeconfig && process.env.REQUIRE_KUBERNETES_TESTS === '1') {
  throw new Error('REQUIRE_KUBERNETES_TESTS=1 but TEST_KUBECONFIG is unset: start the cluster with scripts/test-cluster.sh up');
}

/**
 * What every suite's node pods ask of the test cluster: its one machine has 2 CPUs, shared by all
 * the suites that run at once, and the default request (500m, the original service's) lets only
 * four node pods be scheduled; the rest would wait Pending. Limits stay as configured.
 */
export const SMALL_NODE_PODS = { K8S_CPU_REQUEST: '20m', K8S_MEMORY_REQUEST: '64Mi' };

/** `describe` when a test cluster is there, `describe.skip` otherwise. */
export const describeOnCluster = testKubeconfig ? describe : describe.skip;

export const testNamespace = (suite: string) => `rln-test-${suite}-${randomBytes(3).toString('hex')}`;

export function kubectl(args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('kubectl', ['--kubeconfig', testKubeconfig!, ...args], { maxBuffer: 64 * 2 ** 20 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout),
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

/** An object as JSON, or undefined when it does not exist. */
export async function kubectlGet(namespace: string, kind: string, name: string): Promise<any> {
  const out = await kubectl(['-n', namespace, 'get', kind, name, '-o', 'json', '--ignore-not-found']);
  return out.trim() ? JSON.parse(out) : undefined;
}

/** Polls `probe` until it answers something truthy; `seen` says what was last seen on timeout. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 60_000, seen?: () => Promise<unknown>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) {
      const last = seen ? `; last seen ${JSON.stringify(await seen().catch((err) => String(err)))}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

export async function deleteNamespace(namespace: string) {
  await kubectl(['delete', 'namespace', namespace, '--wait=false', '--ignore-not-found']).catch(() => {});
}

/**
 * Kills (SIGKILL) every process of a pod's container from this machine, where the test cluster's
 * containerd runs them, found by the container's id in their cgroup: as a crash or an OOM kill
 * would end it, so the kubelet restarts it inside the same pod. (From inside the container, the
 * daemon is its PID 1 and would ignore the signal.) Answers how many processes were killed.
 */
export async function killContainer(namespace: string, pod: string, container: string): Promise<number> {
  const status = (await kubectlGet(namespace, 'pod', pod))?.status?.containerStatuses?.find((c: any) => c.name === container);
  const id = String(status?.containerID ?? '').replace(/^[a-z]+:\/\//, '');
  if (!/^[0-9a-f]{64}$/.test(id)) throw new Error(`no running container ${container} in pod ${pod}: ${JSON.stringify(status)}`);
  let killed = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let cgroup: string;
    try {
      cgroup = readFileSync(`/proc/${pid}/cgroup`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    if (!cgroup.includes(id)) continue;
    try {
      process.kill(Number(pid), 'SIGKILL');
      killed++;
    } catch {
      // ended meanwhile
    }
  }
  return killed;
}
