// A service restart during an export: the export finishes after the restart (the job is taken
// over and starts again from scratch, discarding what the interrupted attempt left), and is never
// left IN_PROGRESS. Once with a simulated crash in-process, once by killing `npm start` mid-export.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { databaseLabel, createTestDatabase } from '../helpers/database.ts';
import { serviceEnv, startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';
import { apiCaller } from '../helpers/server.ts';
import { insertLogExport } from '../../src/db/log-exports.ts';
import { newId } from '../../src/auth/tokens.ts';
import { exportStagingDir } from '../../src/logs/export-job.ts';
import { downloadParts, waitForExport, writeBulkLog } from './export-helpers.ts';
import { startRestartableServer } from './restartable-server.ts';

async function createRunningNode(call: ReturnType<typeof apiCaller>, base: string, token: string) {
  const res = await fetch(`${base}/api/nodes`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'restart-logs', network: 'regtest' }),
  });
  const nodeId = (await res.json()).data.nodeId as string;
  const deadline = Date.now() + 60_000;
  while ((await call(`/api/nodes/${nodeId}`, { token })).json?.data?.status !== 'RUNNING') {
    if (Date.now() > deadline) throw new Error('node did not reach RUNNING');
    await new Promise((r) => setTimeout(r, 200));
  }
  return nodeId;
}

describe(`log export across a service restart on ${databaseLabel()}`, () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  });

  it('an export whose worker crashed is finished after the restart, without the crashed attempt’s leftovers', async () => {
    const s = await startRestartableServer();
    cleanups.push(() => s.stop());
    const call = apiCaller(s.config.publicUrl);
    await s.server().services.accounts.createUser({ email: 'crash@example.com', plan: 'scale' });
    const { token } = await s.server().services.accounts.createToken('crash@example.com', 'test');
    const nodeId = await createRunningNode(call, s.config.publicUrl, token);
    const user = (await s.server().db.query<{ id: string }>(`SELECT id FROM users WHERE email = 'crash@example.com'`))[0]!;

    // What a crash mid-export leaves: the task IN_PROGRESS, its job running under a lease that
    // nobody renews, a part already uploaded and a staging file.
    const db = s.server().db;
    const task = await insertLogExport(db, { id: newId(), nodeId, userId: user.id, from: null, to: null });
    await db.query(
      `INSERT INTO jobs (kind, payload, singleton_key, state, attempts, max_attempts, lease_until)
       VALUES ('logs.export', $1, $2, 'running', 1, 3, now() + make_interval(secs => 2))`,
      [JSON.stringify({ v: 1, taskId: task.id }), `log-export:${task.id}`],
    );
    const leftover = join(tmpdir(), `rln-leftover-${task.id}`);
    writeFileSync(leftover, 'half an archive');
    await s.server().services.logExports.blobs.putFile(`${nodeId}/${task.id}/part-0007.log.gz`, leftover, 'application/gzip');
    mkdirSync(exportStagingDir(s.config.dataDir, task.id), { recursive: true });

    await s.restart();
    const done = await waitForExport(call, token, nodeId, task.id);
    expect(done.json.status).toBe('SUCCEEDED');
    expect(done.json.data).toHaveLength(1);
    expect((await downloadParts(done.json.data))[0]).toContain('# build #1 create');
    expect(readdirSync(join(s.config.dataDir, 'exports', 'blobs', nodeId, task.id))).toEqual(['part-0001.log.gz']);
    expect(existsSync(exportStagingDir(s.config.dataDir, task.id))).toBe(false);
  }, 180_000);

  it('killing the service mid-export: the export finishes after it starts again', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rln-crash-'));
    const database = await createTestDatabase();
    cleanups.push(async () => {
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });
    // BOOTSTRAP_DEV_USER (on by default outside production) gives us a user and a token.
    const env = await serviceEnv(dataDir, { LOG_LEVEL: 'warn', JOB_POLL_INTERVAL_MS: '200', ...(database.url ? { DATABASE_URL: database.url } : {}) });
    let service: ServiceProcess = await startServiceProcess(env);
    cleanups.push(() => service.stop('SIGKILL'));
    const call = apiCaller(service.base);
    const token = readFileSync(join(dataDir, 'dev-token'), 'utf8').trim();
    const nodeId = await createRunningNode(call, service.base, token);

    // ~130 MB of earlier output, so the export is still running when the service dies.
    const lines = 400_000;
    let bytes = 0;
    for (let seq = 1; seq <= 3; seq++) bytes += writeBulkLog(join(dataDir, 'nodes', nodeId), seq, new Date(Date.now() - (4 - seq) * 3600_000), lines);
    expect(bytes).toBeGreaterThan(100 * 2 ** 20);

    const start = await call(`/api/nodes/${nodeId}/logs`, { method: 'POST', token });
    expect(start.status).toBe(200);
    const { taskId } = start.json;
    // Kill as soon as the job is at work (its staging folder exists): a crash mid-export.
    const staging = exportStagingDir(dataDir, taskId);
    const deadline = Date.now() + 30_000;
    while (!existsSync(staging) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    await service.stop('SIGKILL');
    expect(existsSync(staging), 'the export should be running when the service is killed').toBe(true);

    service = await startServiceProcess(env);
    const done = await waitForExport(apiCaller(service.base), token, nodeId, taskId, 120_000);
    expect(done.json.status, done.text).toBe('SUCCEEDED');
    const text = (await downloadParts(done.json.data)).join('');
    for (let seq = 1; seq <= 3; seq++) {
      expect(text).toContain(` stdout bulk ${seq} line 0 `);
      expect(text).toContain(` stdout bulk ${seq} line ${lines - 1} `);
    }
    expect(text.split('\n').filter((l) => l.includes(' stdout bulk ')).length).toBe(3 * lines);
  }, 300_000);
});
