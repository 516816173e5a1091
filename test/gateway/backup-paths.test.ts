// RLN's /backup and /restore through both gateways: `backup_path` is confined to the node's client
// backups folder beside its storage (nodes/paths/backup-path.ts). A plain file name lands there under the
// name the gateway chooses, never in the storage directory RLN archives into every backup; a path (traversal, absolute, into another node's storage or DATA_DIR, into the
// node's own storage but not as a plain name) is refused with a 400 before the node sees it.
import { existsSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { USER_BACKUP_PREFIX } from '../../src/nodes/paths/backup-path.ts';
import { rawRequest, tlsRequest, type ClientCredentials } from './gateway-client.ts';
import { backUp } from '../backups/backup-helpers.ts';

const PASSWORD = 'node-password-123';

describe(`backup paths through the node gateways on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let aliceNode: string;
  let freshNode: string;
  let bobNode: string;
  let cert: ClientCredentials;
  let freshCert: ClientCredentials;

  const storage = (nodeId: string) => join(t.config.dataDir, 'nodes', nodeId, 'storage');
  const clientBackups = (nodeId: string) => join(t.config.dataDir, 'nodes', nodeId, 'client-backups');
  const bearer = (nodeId: string, route: string, body: unknown) =>
    rawRequest(t.config.nodeApiUrl, `/${alice.id}/${nodeId}/${route}`, {
      method: 'POST',
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
    });
  const mtls = (creds: ClientCredentials, nodeId: string, route: string, body: unknown) =>
    tlsRequest(t.config.userNodeUrl, `/nodes/${alice.id}/${nodeId}/${route}`, { ...creds, ca: creds.certificateChain }, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
  const issue = async (nodeId: string) => {
    const r = await t.call(`/api/nodes/${nodeId}/generate-cert`, { method: 'POST', token: alice.token });
    expect(r.status, r.text).toBe(200);
    return r.json as ClientCredentials;
  };

  beforeAll(async () => {
    t = await startTestServer();
    const tenants = await createTenants(t);
    alice = tenants.alice;
    // RLN backups go only into nodes without continuous state (domain/continuous-state.ts).
    const settings = { continuousState: false };
    [aliceNode, freshNode] = await createNodes(t, alice, [{ name: 'wallet', settings }, { name: 'fresh', settings }]);
    [bobNode] = await createNodes(t, tenants.bob, [{ name: 'bobs', settings }]);
    const init = await t.call(`/api/nodes/${aliceNode}/init`, { method: 'POST', token: alice.token, body: { password: PASSWORD } });
    expect(init.status, init.text).toBe(200);
    cert = await issue(aliceNode);
    freshCert = await issue(freshNode);
  });
  afterAll(() => t?.stop());

  it('a plain file name: the node writes it in its client backups folder beside its storage, not in the storage RLN archives (bearer and mTLS)', async () => {
    const viaBearer = await bearer(aliceNode, 'backup', { backup_path: 'mine-1', password: PASSWORD });
    expect(viaBearer.status, viaBearer.text).toBe(200);
    const viaMtls = await mtls(cert, aliceNode, 'backup', { backup_path: 'mine-2.zip', password: PASSWORD });
    expect(viaMtls.status, viaMtls.text).toBe(200);
    const files = readdirSync(clientBackups(aliceNode));
    expect(files).toContain(`${USER_BACKUP_PREFIX}mine-1`);
    expect(files).toContain(`${USER_BACKUP_PREFIX}mine-2.zip`);
    expect(readdirSync(storage(aliceNode)).filter((name) => name.startsWith(USER_BACKUP_PREFIX))).toEqual([]);
  });

  it("a restore reads from the node's own client backups folder only: the node is told its own path", async () => {
    // The fresh node has no such file: the node's answer names where it looked.
    const r = await bearer(freshNode, 'restore', { backup_path: 'mine-1', password: PASSWORD });
    expect(r.status).toBe(400);
    expect(r.text).toContain(join(clientBackups(freshNode), `${USER_BACKUP_PREFIX}mine-1`));
  });

  it('a backup an older version kept in the storage directory is moved beside it at the next call, and still restores', async () => {
    const made = await bearer(aliceNode, 'backup', { backup_path: 'from-before', password: PASSWORD });
    expect(made.status, made.text).toBe(200);
    // Where the service kept it before: inside the storage directory.
    renameSync(join(clientBackups(aliceNode), `${USER_BACKUP_PREFIX}from-before`), join(storage(aliceNode), `${USER_BACKUP_PREFIX}from-before`));
    const other = await bearer(aliceNode, 'backup', { backup_path: 'after', password: PASSWORD });
    expect(other.status, other.text).toBe(200);
    expect(readdirSync(storage(aliceNode)).filter((name) => name.startsWith(USER_BACKUP_PREFIX))).toEqual([]);
    expect(readdirSync(clientBackups(aliceNode))).toContain(`${USER_BACKUP_PREFIX}from-before`);
    // Restored into the node that made it: the file is found where the gateway now looks.
    const restored = await mtls(cert, aliceNode, 'restore', { backup_path: 'from-before', password: PASSWORD });
    expect(restored.status, restored.text).not.toBe(400);
    expect(restored.text).not.toContain('not found');
  });

  it("the service's own backup first moves client backups an older version kept in the storage it archives", async () => {
    const made = await bearer(aliceNode, 'backup', { backup_path: 'left-inside', password: PASSWORD });
    expect(made.status, made.text).toBe(200);
    renameSync(join(clientBackups(aliceNode), `${USER_BACKUP_PREFIX}left-inside`), join(storage(aliceNode), `${USER_BACKUP_PREFIX}left-inside`));
    const backup = await backUp(t, alice, aliceNode, PASSWORD);
    expect(backup.status, JSON.stringify(backup)).toBe('SUCCEEDED');
    expect(readdirSync(storage(aliceNode)).filter((name) => name.startsWith(USER_BACKUP_PREFIX))).toEqual([]);
    expect(readdirSync(clientBackups(aliceNode))).toContain(`${USER_BACKUP_PREFIX}left-inside`);
  });

  it('a start (process runtime) moves client backups an older version kept in the storage before the daemon runs', async () => {
    const stop = await t.call(`/api/nodes/${freshNode}/stop`, { method: 'POST', token: alice.token });
    expect(stop.status, stop.text).toBe(200);
    await t.waitForStatus(alice, freshNode, 'PAUSED');
    writeFileSync(join(storage(freshNode), `${USER_BACKUP_PREFIX}from-an-older-version`), 'a backup');
    const start = await t.call(`/api/nodes/${freshNode}/start`, { method: 'POST', token: alice.token });
    expect(start.status, start.text).toBe(200);
    await t.waitForStatus(alice, freshNode, 'RUNNING');
    expect(readdirSync(storage(freshNode)).filter((name) => name.startsWith(USER_BACKUP_PREFIX))).toEqual([]);
    expect(readdirSync(clientBackups(freshNode))).toContain(`${USER_BACKUP_PREFIX}from-an-older-version`);
  });

  const hostile = () => [
    '../../x',
    '../storage/x',
    '..',
    '.',
    '',
    '/tmp/rln-cloud-escape',
    join(t.config.dataDir, 'escape'),
    join(storage(bobNode), 'planted'),
    join(storage(freshNode), 'planted'),
    // The node's own storage, spelled as a path: refused too, the gateway chooses the path.
    join(storage(aliceNode), 'own-path'),
    join(clientBackups(aliceNode), 'own-path'),
    'sub/dir',
    'a\\b',
    '.hidden',
    'x.partial',
    'a'.repeat(101),
    'name\u0000',
    `${USER_BACKUP_PREFIX}x/../../escape`,
  ];

  it('refuses a path on /backup with a 400 through the bearer gateway, writing nothing', async () => {
    for (const path of hostile()) {
      const r = await bearer(aliceNode, 'backup', { backup_path: path, password: PASSWORD });
      expect(r.status, `${JSON.stringify(path)}: ${r.text}`).toBe(400);
      expect(r.json?.error, path).toBeDefined();
    }
    expect(existsSync('/tmp/rln-cloud-escape')).toBe(false);
    expect(existsSync(join(t.config.dataDir, 'escape'))).toBe(false);
    expect(existsSync(join(storage(bobNode), 'planted'))).toBe(false);
    expect(existsSync(join(storage(aliceNode), 'own-path'))).toBe(false);
    expect(existsSync(join(clientBackups(aliceNode), 'own-path'))).toBe(false);
  });

  it('refuses a path on /backup and /restore with a 400 through the mTLS gateway', async () => {
    for (const path of hostile()) {
      const backup = await mtls(cert, aliceNode, 'backup', { backup_path: path, password: PASSWORD });
      expect(backup.status, `${JSON.stringify(path)}: ${backup.text}`).toBe(400);
      expect(backup.json?.error, path).toBeDefined();
      const restore = await mtls(freshCert, freshNode, 'restore', { backup_path: path, password: PASSWORD });
      expect(restore.status, `${JSON.stringify(path)}: ${restore.text}`).toBe(400);
      expect(restore.json?.error, path).toBeDefined();
    }
  });

  it("refuses to restore from another node's backup file, named by its path", async () => {
    const r = await bearer(freshNode, 'restore', { backup_path: join(clientBackups(aliceNode), `${USER_BACKUP_PREFIX}mine-1`), password: PASSWORD });
    expect(r.status).toBe(400);
    expect(r.json?.error).toBeDefined();
    // Still without a wallet: nothing was restored.
    const node = await t.call(`/api/nodes/${freshNode}`, { token: alice.token });
    expect(node.json.data.initialized).toBe(false);
  });

  it('refuses a body that is not an object, or without backup_path', async () => {
    for (const body of ['not json', '[]', '"x"', '{}', '{"backup_path": 7, "password": "x"}']) {
      const r = await bearer(aliceNode, 'backup', body);
      expect(r.status, body).toBe(400);
      expect(r.json?.error, body).toBeDefined();
    }
  });
});
