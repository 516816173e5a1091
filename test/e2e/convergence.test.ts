// Convergence of the real service (npm start, process runtime, devnode daemons): the server is
// killed with SIGKILL in the middle of a release rollout and restarted; a daemon is killed from
// outside; the whole service is restarted. Every node ends in its desired state with its history.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callService,
  serviceEnv,
  startServiceProcess,
  waitForServiceNode,
  type ServiceProcess,
} from '../helpers/service-process.ts';
import { isProcessAlive } from '../../src/platform/process-alive.ts';

describe('convergence after crashes', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-converge-'));
  let svc: ServiceProcess;
  let token: string;
  const nodeIds: string[] = [];
  const daemonPid = (id: string) => {
    const file = join(dataDir, 'nodes', id, 'daemon.pid');
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')).pid as number) : undefined;
  };

  beforeAll(async () => {
    // RECONCILE_INTERVAL_MS short so the test does not wait on the default period.
    svc = await startServiceProcess(await serviceEnv(dataDir, { RECONCILE_INTERVAL_MS: '500' }));
    token = readFileSync(join(dataDir, 'dev-token'), 'utf8').trim();
    for (let i = 0; i < 3; i++) {
      const r = await callService(svc, token, '/api/nodes', { method: 'POST', body: { name: `c${i}`, network: 'regtest' } });
      nodeIds.push(r.json.data.nodeId);
    }
    for (const id of nodeIds) await waitForServiceNode(svc, token, id, 'RUNNING');
  }, 120_000);
  afterAll(async () => {
    await svc?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('finishes a rollout after the server is killed during it', async () => {
    const published = svc.cli(['release', 'publish', 'v2.0.0', '--concurrency', '1']);
    expect(published).toMatchObject({ version: 'v2.0.0', rollout: { nodes: 3, started: 1 } });
    process.kill(svc.serverPid(), 'SIGKILL');
    await svc.stop('SIGKILL');

    svc = await startServiceProcess(svc.env);
    for (const id of nodeIds) {
      const node = await waitForServiceNode(svc, token, id, 'RUNNING on v2.0.0', 90_000, (n) => n?.status === 'RUNNING' && n.rln_commit_id === 'v2.0.0');
      expect(node.locked).toBe(true);
      expect(node.builds.every((b: any) => b.buildComplete)).toBe(true);
      expect(node.builds[0]).toMatchObject({ buildNumber: 1, action: 'create', buildStatus: 'SUCCESS' });
      expect(node.builds.at(-1)).toMatchObject({ action: 'upgrade', imageVersion: 'v2.0.0', buildStatus: 'SUCCESS' });
    }
    const status = svc.cli(['release', 'status', 'v2.0.0']);
    expect(status).toMatchObject({ state: 'completed', total: 3, nodes: { succeeded: 3, failed: 0 } });
  }, 180_000);

  it('restarts a daemon killed from outside, locked', async () => {
    const id = nodeIds[0]!;
    const before = daemonPid(id)!;
    expect(isProcessAlive(before)).toBe(true);
    process.kill(before, 'SIGKILL');
    const deadline = Date.now() + 30_000;
    while (!(daemonPid(id) && daemonPid(id) !== before)) {
      if (Date.now() > deadline) throw new Error('the daemon was not restarted');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(isProcessAlive(daemonPid(id)!)).toBe(true);
    const node = (await callService(svc, token, `/api/nodes/${id}`)).json.data;
    expect(node).toMatchObject({ status: 'RUNNING', locked: true, rln_commit_id: 'v2.0.0' });
  }, 60_000);

  it('brings running nodes back after a restart of the whole service', async () => {
    const stopped = svc.cli(['token', 'list', 'dev@localhost']); // the CLI works against the running server
    expect(stopped.tokens.length).toBeGreaterThan(0);
    const pids = nodeIds.map(daemonPid);
    await svc.stop('SIGTERM');
    // The service stops its daemons on the way out; give a slow machine a moment to reap them.
    const gone = Date.now() + 15_000;
    while (pids.some((pid) => pid && isProcessAlive(pid)) && Date.now() < gone) await new Promise((r) => setTimeout(r, 100));
    for (const pid of pids) expect(pid && isProcessAlive(pid)).toBeFalsy();

    svc = await startServiceProcess(svc.env);
    for (const id of nodeIds) {
      const deadline = Date.now() + 30_000;
      while (!(daemonPid(id) && isProcessAlive(daemonPid(id)!))) {
        if (Date.now() > deadline) throw new Error(`node ${id} did not come back`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const node = (await callService(svc, token, `/api/nodes/${id}`)).json.data;
      expect(node).toMatchObject({ status: 'RUNNING', rln_commit_id: 'v2.0.0' });
    }
  }, 90_000);
});
