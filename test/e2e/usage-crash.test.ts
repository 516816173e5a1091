// Node time across a crash of the service: `npm start`, a node RUNNING, the server killed with
// SIGKILL in the middle of that running interval, started again. The usage the API and the
// operator's report answer is the time the recorded status changes say, to the second: nothing of
// the interval is lost (the changes are written in the transactions that made them, by the
// database's trigger) and nothing is counted twice (each change once, none replayed by the restart).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/db/database.ts';
import { callService as api, serviceEnv, startServiceProcess, waitForServiceNode as waitForStatus, type ServiceProcess } from '../helpers/service-process.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('node time across a crash of the service (PGlite, npm start)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-usage-crash-'));
  const running: ServiceProcess[] = [];
  afterAll(async () => {
    for (const svc of running) await svc.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('loses and doubles no running time when the server is killed during a running interval', async () => {
    const svc = await startServiceProcess(await serviceEnv(dataDir, { RECONCILE_INTERVAL_MS: '1000' }));
    running.push(svc);
    svc.cli(['user', 'create', 'meter@example.com', '--plan', 'wallet']);
    const { token } = svc.cli(['token', 'create', 'meter@example.com', '--name', 'usage']);
    const created = await api(svc, token, '/api/nodes', { method: 'POST', body: { name: 'metered', network: 'regtest' } });
    const nodeId = created.json.data.nodeId as string;
    await waitForStatus(svc, token, nodeId, 'RUNNING');
    await sleep(2_000);
    process.kill(svc.serverPid(), 'SIGKILL');
    await svc.stop('SIGKILL');
    await sleep(1_000);
    const again = await startServiceProcess(svc.env);
    running.push(again);
    await waitForStatus(again, token, nodeId, 'RUNNING');
    await sleep(1_000);
    const month = new Date().toISOString().slice(0, 7);
    const usage = (await api(again, token, `/api/usage?month=${month}`)).json;
    const askedAt = Date.now();
    const report = again.cli(['usage', 'report', '--month', month]);
    await again.stop();

    // The record itself, read once the service is down: each status change once, in order.
    const db = await openPglite(join(dataDir, 'pglite'));
    const changes = await db.query<{ status: string; changed_at: Date }>('SELECT status, changed_at FROM node_status_changes WHERE node_id = $1 ORDER BY changed_at, id', [nodeId]);
    await db.close();
    for (let i = 1; i < changes.length; i++) expect(changes[i]!.status).not.toBe(changes[i - 1]!.status);
    const runningUntil = (end: number) =>
      changes.reduce((sum, c, i) => (c.status === 'RUNNING' ? sum + Math.min(changes[i + 1]?.changed_at.getTime() ?? end, end) - c.changed_at.getTime() : sum), 0) / 1000;

    const node = usage.nodes.find((n: { nodeId: string }) => n.nodeId === nodeId);
    const firstRunning = changes.find((c) => c.status === 'RUNNING')!.changed_at.getTime();
    // Exactly the record's time up to the answer (whole seconds, within the request's own duration)...
    expect(node.runningSeconds).toBeGreaterThanOrEqual(Math.floor(runningUntil(askedAt - 2_000)) - 1);
    expect(node.runningSeconds).toBeLessThanOrEqual(Math.ceil(runningUntil(askedAt)));
    // ...which covers the interval the crash fell in (at least the 2 s before the kill) and never
    // more than the wall time since the node first ran.
    expect(node.runningSeconds).toBeGreaterThanOrEqual(2);
    expect(node.runningSeconds).toBeLessThanOrEqual(Math.ceil((askedAt - firstRunning) / 1000));
    const row = report.rows.find((r: { nodeId: string }) => r.nodeId === nodeId);
    expect(row).toMatchObject({ ownerEmail: 'meter@example.com', plan: 'wallet' });
    expect(row.runningSeconds).toBeGreaterThanOrEqual(node.runningSeconds);
    expect(row.runningSeconds).toBeLessThanOrEqual(node.runningSeconds + 3);
  }, 180_000);
});
