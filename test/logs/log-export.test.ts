// Log exports with the local blob store through real HTTP: a real devnode's output and build
// history exported, downloaded through signed URLs and decompressed; time ranges, multi-part
// archives, URL expiry and tampering, retention, the stuck-export timeout, bad input and security.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { insertLogExport } from '../../src/db/log-exports.ts';
import { ExportJanitor } from '../../src/logs/export-janitor.ts';
import { createLogger } from '../../src/logger.ts';
import { downloadParts, waitForExport, writeSyntheticLog } from './export-helpers.ts';

const PART_BYTES = 16 * 1024;

describe(`log export, local blob store, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let nodeId: string;
  let otherNodeId: string;
  let taskId: string;
  let createdAt: Date;

  const startExport = (body?: unknown, node = nodeId, user = alice) => t.call(`/api/nodes/${node}/logs`, { method: 'POST', token: user.token, body });
  const getExport = (task: string, node = nodeId, user = alice) => t.call(`/api/nodes/${node}/logs?taskId=${task}`, { token: user.token });
  const exportAndWait = async (body?: unknown) => {
    const r = await startExport(body);
    expect(r.status, r.text).toBe(200);
    return waitForExport(t.call, alice.token, nodeId, r.json.taskId);
  };
  const janitor = () =>
    new ExportJanitor({ db: t.server.db, blobs: t.server.services.logExports.blobs, config: t.config, log: createLogger('silent') });

  beforeAll(async () => {
    t = await startTestServer({ LOG_EXPORT_PART_BYTES: String(PART_BYTES) });
    ({ alice, bob } = await createTenants(t, { alice: 'scale' }));
    createdAt = new Date();
    [nodeId, otherNodeId] = await createNodes(t, alice, [{ name: 'logs-a' }, { name: 'logs-b' }]);
  });
  afterAll(() => t?.stop());

  it('exports the daemon output and build history, downloadable through the URL', async () => {
    const start = await startExport();
    expect(start.status).toBe(200);
    expect(start.json).toEqual({ taskId: expect.stringMatching(/^[0-9a-f]{32}$/) });
    taskId = start.json.taskId;
    const done = await waitForExport(t.call, alice.token, nodeId, taskId);
    expect(done.status).toBe(200);
    expect(done.json).toEqual({ status: 'SUCCEEDED', data: [expect.stringMatching(`^${t.base}/downloads/`)], expiresAt: expect.any(String) });
    const expiresIn = Date.parse(done.json.expiresAt) - Date.now();
    expect(expiresIn).toBeGreaterThan(14 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(15 * 60_000);

    const [text] = await downloadParts(done.json.data);
    expect(text).toContain(`# node ${nodeId} "logs-a" (regtest)`);
    expect(text).toMatch(/# build #1 create devnode-0\.1\.0 SUCCESS started \S+Z finished \S+Z/);
    // devnode's own start-up line, as collected: receipt time, stream, the daemon's line.
    expect(text).toMatch(/\n\d{4}-\d\d-\d\dT[\d:.]+Z stdout \S+Z INFO devnode devnode-0\.1\.0 started: network regtest/);
  });

  it('records a LOG_EXPORT_READY event when the export finishes', async () => {
    const events = await t.server.db.query<{ payload: any }>(
      `SELECT payload FROM node_events WHERE node_id = $1 AND event_type = 'LOG_EXPORT_READY'`,
      [nodeId],
    );
    expect(events.map((e) => e.payload.details)).toContainEqual(expect.objectContaining({ nodeId, taskId, parts: 1 }));
  });

  it('answers fresh URLs each time it is asked', async () => {
    const first = await getExport(taskId);
    await new Promise((r) => setTimeout(r, 1100));
    const second = await getExport(taskId);
    expect(Date.parse(second.json.expiresAt)).toBeGreaterThan(Date.parse(first.json.expiresAt));
    expect(second.json.data[0]).not.toBe(first.json.data[0]);
    expect((await downloadParts(second.json.data))[0]).toContain('# build #1 create');
  });

  it('selects daemon output by time range, always with the whole build history', async () => {
    const future = await exportAndWait({ from: new Date(Date.now() + 3600_000).toISOString() });
    const [futureText] = await downloadParts(future.json.data);
    expect(futureText).toContain('# build #1 create');
    expect(futureText).not.toContain(' stdout ');

    const around = await exportAndWait({ from: new Date(createdAt.getTime() - 60_000).toISOString(), to: new Date().toISOString() });
    expect((await downloadParts(around.json.data))[0]).toContain('INFO devnode devnode-0.1.0 started');
  });

  it('splits a large export into gzip parts that each decompress alone and keep every line in order', async () => {
    const nodeDir = join(t.config.dataDir, 'nodes', nodeId);
    const start = new Date(Date.now() - 48 * 3600_000);
    const synthetic = writeSyntheticLog(nodeDir, 1, start, 20_000);
    const done = await exportAndWait();
    expect(done.json.data.length).toBeGreaterThan(3);
    const parts = await downloadParts(done.json.data);
    for (const p of parts) expect(p.endsWith('\n')).toBe(true);
    const whole = parts.join('');
    expect(whole).toContain(synthetic);
    expect(whole.indexOf('# build #1')).toBeLessThan(whole.indexOf('synthetic line 0 '));
    expect(whole.indexOf('synthetic line 19999 ')).toBeLessThan(whole.indexOf('INFO devnode'));

    // A range inside the rotated file: exactly its lines [100 s, 200 s).
    const ranged = await exportAndWait({
      from: new Date(start.getTime() + 100_000).toISOString(),
      to: new Date(start.getTime() + 200_000).toISOString(),
    });
    const lines = (await downloadParts(ranged.json.data)).join('').split('\n').filter((l) => l.includes(' stdout '));
    expect(lines).toHaveLength(100);
    expect(lines[0]).toContain('synthetic line 100 ');
    expect(lines[99]).toContain('synthetic line 199 ');
  });

  describe('download URLs', () => {
    let url: URL;
    beforeAll(async () => {
      url = new URL((await getExport(taskId)).json.data[0]);
    });
    const denied = async (u: string) => {
      const r = await fetch(u);
      expect(r.status).toBe(403);
      const body = await r.json();
      expect(body.error).toEqual({ code: 'forbidden', message: 'this download link is invalid or has expired', requestId: expect.any(String) });
    };

    it('answer 403 revealing nothing when tampered with or pointed at another object', async () => {
      const sig = url.searchParams.get('signature')!;
      const tampered = new URL(url);
      tampered.searchParams.set('signature', `${sig[0] === 'a' ? 'b' : 'a'}${sig.slice(1)}`);
      await denied(tampered.toString());
      const later = new URL(url);
      later.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
      await denied(later.toString());
      await denied(url.toString().replace('part-0001', 'part-0002'));
      await denied(url.toString().replace(taskId, 'f'.repeat(32)));
      await denied(`${t.base}${url.pathname}`);
      await denied(url.toString().replace(`${nodeId}/`, `${otherNodeId}/`));
    });

    it('answer 403 once expired', async () => {
      const [part] = (await t.server.db.query<{ parts: any }>('SELECT parts FROM log_exports WHERE id = $1', [taskId]))[0]!.parts;
      const short = await t.server.services.logExports.blobs.presignGet(part.key, { expiresInSeconds: 1, filename: 'x.gz' });
      expect((await fetch(short.url)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 2100));
      await denied(short.url);
    });
  });

  describe('bad input', () => {
    it('unknown and foreign nodes answer 404 alike', async () => {
      for (const [node, user] of [['f'.repeat(32), alice], [nodeId, bob]] as const) {
        const post = await startExport(undefined, node, user);
        const get = await getExport(taskId, node, user);
        expect([post.status, post.json.error.code]).toEqual([404, 'node_not_found']);
        expect([get.status, get.json.error.code]).toEqual([404, 'node_not_found']);
      }
    });

    it('unknown tasks, and tasks of another node, answer 404', async () => {
      for (const r of [await getExport('0'.repeat(32)), await getExport(taskId, otherNodeId)]) {
        expect(r.status).toBe(404);
        expect(r.json.error.code).toBe('log_export_not_found');
      }
    });

    it('malformed or missing taskId, bad times, and unknown fields answer 400', async () => {
      for (const path of [`/api/nodes/${nodeId}/logs?taskId=nope`, `/api/nodes/${nodeId}/logs`, `/api/nodes/${nodeId}/logs?taskId=${taskId}&x=1`]) {
        const r = await t.call(path, { token: alice.token });
        expect([r.status, r.json.error.code]).toEqual([400, 'invalid_request']);
      }
      const bodies = [{ from: 'yesterday' }, { to: '2026-13-45T00:00:00Z' }, { from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' }, { since: 'x' }, { from: 5 }];
      for (const body of bodies) {
        const r = await startExport(body);
        expect([r.status, r.json.error.code], JSON.stringify(body)).toEqual([400, 'invalid_request']);
      }
      expect((await startExport({ from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' })).json.error.message).toContain('from must not be after to');
    });

    it('a second export while one runs for the node answers 409 with the running task', async () => {
      const running = await insertLogExport(t.server.db, { id: 'a'.repeat(32), nodeId: otherNodeId, userId: alice.id, from: null, to: null });
      const r = await startExport(undefined, otherNodeId);
      expect(r.status).toBe(409);
      expect(r.json.error).toMatchObject({ code: 'log_export_in_progress', details: { taskId: running.id } });
      expect((await getExport(running.id, otherNodeId)).status).toBe(202);
    });
  });

  it('fails an export that never finishes once LOG_EXPORT_TIMEOUT_MINUTES pass', async () => {
    const result = await janitor().sweep(new Date(Date.now() + 61 * 60_000));
    expect(result.timedOut).toBe(1);
    const r = await getExport('a'.repeat(32), otherNodeId);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ status: 'FAILED', data: [], error: { code: 'export_timed_out', message: expect.stringContaining('60 minutes') } });
    // The node can export again.
    expect((await startExport(undefined, otherNodeId)).status).toBe(200);
  });

  it('deletes exports and their archives after LOG_EXPORT_RETENTION_HOURS', async () => {
    const url = (await getExport(taskId)).json.data[0];
    expect((await fetch(url)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500)); // let the export started above finish
    const result = await janitor().sweep(new Date(Date.now() + 25 * 3600_000));
    expect(result.expired).toBeGreaterThanOrEqual(5);
    expect((await getExport(taskId)).status).toBe(404);
    const gone = await fetch(url);
    expect(gone.status).toBe(404);
    expect((await t.server.db.query('SELECT id FROM log_exports')).length).toBe(0);
  });
});
