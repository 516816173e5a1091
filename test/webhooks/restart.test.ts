// Durability: the service is killed with SIGKILL while a backlog of deliveries waits for a receiver
// that keeps failing; after the restart every event arrives, with its original webhook-id, signed
// with the same key (kept in DATA_DIR).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { callService, serviceEnv, startServiceProcess, waitForServiceNode, type ServiceProcess } from '../helpers/service-process.ts';
import { createTestDatabase, databaseLabel, type TestDatabase } from '../helpers/database.ts';
import { startReceiver, verifyWithPython } from './receiver.ts';

describe(`webhook deliveries survive a crash on ${databaseLabel()}`, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-webhook-crash-'));
  let svc: ServiceProcess | undefined;
  let database: TestDatabase | undefined;

  afterAll(async () => {
    await svc?.stop('SIGKILL');
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('loses nothing when killed with a backlog', async () => {
    const receiver = await startReceiver();
    receiver.answer = () => ({ status: 500 });
    database = await createTestDatabase();
    const env = await serviceEnv(dataDir, {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      // ~100 s of two-second retries: long enough to outlast the restart below on a busy machine.
      WEBHOOK_RETRY_SCHEDULE: ['0', ...new Array(49).fill('2s')].join(','),
      JOB_POLL_INTERVAL_MS: '200',
      ...(database.url ? { DATABASE_URL: database.url } : {}),
    });
    svc = await startServiceProcess(env);
    const token = readFileSync(join(dataDir, 'dev-token'), 'utf8').trim();
    const created = await callService(svc, token, '/api/nodes', { method: 'POST', body: { name: 'durable', network: 'regtest', settings: { webhookUrl: receiver.url } } });
    expect(created.status).toBe(200);
    const nodeId = created.json.data.nodeId;
    await waitForServiceNode(svc, token, nodeId, 'RUNNING');
    const testIds: string[] = [];
    for (let i = 0; i < 3; i++) testIds.push((await callService(svc, token, `/api/nodes/${nodeId}/webhooks/test`, { method: 'POST' })).json.data.eventId);
    await receiver.waitFor((all) => all.length >= 2); // the head of the queue is being retried
    // Wait until the test events have become deliveries too (fan-out follows the commit).
    let before: any[] = [];
    for (let i = 0; i < 100 && !testIds.every((id) => before.some((d) => d.eventId === id)); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100));
      before = (await callService(svc, token, `/api/nodes/${nodeId}/webhooks/deliveries`)).json.data;
    }
    const expected = before.map((d) => d.eventId).reverse(); // oldest first
    expect(expected).toEqual(expect.arrayContaining(testIds));
    expect(before.every((d) => d.state !== 'succeeded')).toBe(true);
    // Every key, of both schemes: the same after the restart.
    const keys = async () => (await callService(svc!, token, '/api/webhook-public-keys')).json.data as Array<{ scheme: string; publicKey: string; current: boolean }>;
    const keysBefore = await keys();

    await svc.stop('SIGKILL'); // the whole process group at once: npm, the server, its daemons
    receiver.answer = () => ({ status: 204 });
    svc = await startServiceProcess(env);

    await receiver.waitFor((all) => expected.every((id) => all.some((w) => w.id === id && w.answeredOk)), 60_000);
    const delivered = receiver.received.filter((w) => w.answeredOk);
    // In event order, each exactly once (nothing was accepted before the crash).
    expect(delivered.map((w) => w.id)).toEqual(expected);
    const keysAfter = await keys();
    expect(keysAfter).toEqual(keysBefore);
    const keyAfter = keysAfter.find((k) => k.scheme === 'standard-webhooks-v1a' && k.current)!.publicKey;
    expect(verifyWithPython([keyAfter], delivered)).toEqual(delivered.map(() => [true]));
    const after = (await callService(svc, token, `/api/nodes/${nodeId}/webhooks/deliveries`)).json.data as any[];
    expect(after.filter((d) => expected.includes(d.eventId)).every((d) => d.state === 'succeeded')).toBe(true);
    await receiver.close();
  }, 180_000);
});
