// Backups with the service started as the README says (`npm start`) and the CLI a user runs
// beside it: `rln-cloud backup create|list|download` find the API and the development token on
// their own, and a service killed with SIGKILL in the middle of a backup ends it FAILED at its
// next start, with nothing left in the node's storage and, with automatic unlock on, the node
// unlocked again.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callService, serviceEnv, startServiceProcess, waitForServiceNode, type ServiceProcess } from '../helpers/service-process.ts';
import { sha256 } from './backup-helpers.ts';

const PASSWORD = 'cli-backup-password';

describe('backups of a service started with npm start, through the CLI', () => {
  let dataDir: string;
  let svc: ServiceProcess;
  let token: string;
  let nodeId: string;
  const api = (path: string, init?: { method?: string; body?: unknown }) => callService(svc, token, path, init);

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rln-backup-svc-'));
    svc = await startServiceProcess(await serviceEnv(dataDir));
    token = readFileSync(join(dataDir, 'dev-token'), 'utf8').trim();
    const created = await api('/api/nodes', { method: 'POST', body: { name: 'cli-backups', network: 'regtest' } });
    nodeId = created.json.data.nodeId;
    await waitForServiceNode(svc, token, nodeId, 'RUNNING');
    expect((await api(`/api/nodes/${nodeId}/init`, { method: 'POST', body: { password: PASSWORD } })).status).toBe(200);
    expect((await api(`/api/nodes/${nodeId}/unlock`, { method: 'POST', body: { password: PASSWORD } })).status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates, lists and downloads a backup with the development token, the password from a file', () => {
    const passwordFile = join(dataDir, 'password.txt');
    writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
    const created = svc.cli(['backup', 'create', nodeId, '--password-file', passwordFile]);
    expect(created).toMatchObject({ nodeId, status: 'SUCCEEDED', sha256: expect.any(String) });
    const listed = svc.cli(['backup', 'list', nodeId]);
    expect(listed.backups.map((b: { backupId: string }) => b.backupId)).toEqual([created.backupId]);
    const out = join(dataDir, 'saved.rlnbackup');
    const saved = svc.cli(['backup', 'download', nodeId, created.backupId, '--out', out]);
    expect(saved).toEqual({ file: out, sizeBytes: created.sizeBytes, sha256: created.sha256 });
    expect(sha256(readFileSync(out))).toBe(created.sha256);
  });

  it('says what went wrong: a wrong password, an unknown node, no token', () => {
    const passwordFile = join(dataDir, 'wrong.txt');
    writeFileSync(passwordFile, 'not-the-password');
    expect(svc.cli(['backup', 'create', nodeId, '--password-file', passwordFile]).error).toMatchObject({ code: 'invalid_state', message: expect.stringContaining('refused the password') });
    expect(svc.cli(['backup', 'list', 'f'.repeat(32)]).error.code).toBe('node_not_found');
    expect(svc.cli(['backup', 'list', nodeId, '--token-file', join(dataDir, 'missing')]).error.code).toBe('unauthorized');
  });

  it('a service killed mid-backup ends the backup FAILED at its next start, leaves no file behind, and automatic unlock unlocks the node', async () => {
    expect((await api(`/api/nodes/${nodeId}/auto-unlock`, { method: 'PUT', body: { password: PASSWORD } })).status).toBe(200);
    // A storage large enough that the backup is still running when the service is killed.
    writeFileSync(join(dataDir, 'nodes', nodeId, 'storage', 'ballast.bin'), Buffer.alloc(300 * 1024 * 1024, 7));
    const started = await api(`/api/nodes/${nodeId}/backups`, { method: 'POST', body: { password: PASSWORD } });
    expect(started.status).toBe(202);
    // Killed once the node has been locked for it, that is while it really runs.
    await waitForServiceNode(svc, token, nodeId, 'locked', 30_000, (n) => n?.locked === true);
    expect((await api(`/api/nodes/${nodeId}/backups/${started.json.backupId}`)).json.status).toBe('IN_PROGRESS');
    await svc.stop('SIGKILL');
    svc = await startServiceProcess(svc.env);
    const deadline = Date.now() + 30_000;
    let backup: any;
    do {
      backup = (await api(`/api/nodes/${nodeId}/backups/${started.json.backupId}`)).json;
      if (backup.status !== 'IN_PROGRESS') break;
      await new Promise((r) => setTimeout(r, 200));
    } while (Date.now() < deadline);
    expect(backup).toMatchObject({ status: 'FAILED', error: { code: 'backup_interrupted' } });
    // It was unlocked before the backup locked it, and automatic unlock is on: unlocked again.
    await waitForServiceNode(svc, token, nodeId, 'unlocked', 60_000, (n) => n?.status === 'RUNNING' && n?.locked === false);
    // Neither the service's file nor the daemon's half-written one is left (devnode removes its own at start).
    const storage = readdirSync(join(dataDir, 'nodes', nodeId, 'storage'));
    expect(storage.filter((f) => f.startsWith('rln-cloud-backup-'))).toEqual([]);
    expect(readdirSync(join(dataDir, 'backups', 'staging'))).toEqual([]);
  }, 180_000);
});
