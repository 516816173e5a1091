// /readyz (the readiness probe) and the shutdown a SIGTERM starts: ready when every check passes,
// not ready as soon as the shutdown starts while the listeners still serve for SHUTDOWN_DELAY,
// and a schema behind the code is reported.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkReadiness } from '../../src/composition/readiness.ts';
import { databaseLabel, openMigratedTestDb } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe(`readiness and shutdown on ${databaseLabel()}`, () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ SHUTDOWN_DELAY: '1500ms', SHUTDOWN_TIMEOUT: '5s' });
  });
  afterAll(() => t.stop());

  it('is ready once started, check by check', async () => {
    const res = await t.call('/readyz');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'ready', checks: { service: 'ok', database: 'ok', migrations: 'ok', runtime: 'ok' } });
  });

  it('says not ready at once on shutdown, keeps serving for SHUTDOWN_DELAY, then refuses connections', async () => {
    const user = await t.createUser();
    const stopping = t.server.stop();
    await sleep(200);
    const ready = await t.call('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.json).toMatchObject({ status: 'not ready', checks: { service: 'stopping', database: 'ok' } });
    // Liveness stays fine (a probe failing here would get the pod killed mid-drain), and requests are still served.
    expect((await t.call('/healthz')).status).toBe(200);
    expect((await t.call('/api/nodes', { token: user.token })).status).toBe(200);
    await stopping;
    await expect(fetch(`${t.base}/healthz`)).rejects.toThrow();
  });
});

describe(`the readiness checks on ${databaseLabel()}`, () => {
  let db: Awaited<ReturnType<typeof openMigratedTestDb>>;
  beforeAll(async () => {
    db = await openMigratedTestDb();
  });
  afterAll(() => db.close());

  it('reports a schema behind this code, and a runtime whose watches have not synced', async () => {
    const version = (await db.db.query<{ version: number }>('SELECT max(version) AS version FROM schema_migrations'))[0]!.version;
    await db.db.query('DELETE FROM schema_migrations WHERE version = $1', [version]);
    // Migration numbers may skip one (a number given up before it shipped): the one now applied last.
    const behind = (await db.db.query<{ version: number }>('SELECT max(version) AS version FROM schema_migrations'))[0]!.version;
    const answer = await checkReadiness({ db: db.db, runtime: { isReady: () => false }, serviceState: () => 'ok' });
    expect(answer).toEqual({
      ready: false,
      checks: { service: 'ok', database: 'ok', migrations: `schema at version ${behind}, this version needs ${version}`, runtime: 'the Kubernetes watches have not synced yet' },
    });
  });
});
