// What a node receives from the bearer gateway and the service's own calls once nodes run with RLN's
// Biscuit authentication (issue #40), seen by an echo server standing in for the node: never the
// caller's API token, always one Biscuit of the node's own root key, of the caller's role (admin for
// a full token, read-only for a read-only token), reused while fresh, and nothing for a node created
// before root keys existed. The Biscuits are checked with devnode's copy of RLN's rules.
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountService } from '../../src/accounts/service.ts';
import { loadConfig } from '../../src/config.ts';
import { insertNode, updateNode } from '../../src/db/nodes.ts';
import { newId } from '../../src/auth/tokens.ts';
import { NodeService } from '../../src/nodes/service.ts';
import { createBearerGateway } from '../../src/gateway/gateway-server.ts';
import { NodeAccess } from '../../src/gateway/node-access.ts';
import { RlnClient } from '../../src/rln/client.ts';
import { NodeUnlocker } from '../../src/nodes/unlock/node-unlocker.ts';
import { NodePaths } from '../../src/nodes/paths/node-paths.ts';
import { NodeDaemons } from '../../src/nodes/node-daemons.ts';
import { NodeBiscuits } from '../../src/secrets/node-biscuits.ts';
import { NodeRootKeyStore } from '../../src/secrets/node-root-keys.ts';
import { loadUnlockSeal } from '../../src/secrets/unlock-seal.ts';
import { RevokedTokens } from '../../devnode/revoked-tokens.ts';
import { TokenGate } from '../../devnode/token-gate.ts';
import { databaseLabel, openMigratedTestDb } from '../helpers/database.ts';
import { freePort } from '../helpers/ports.ts';
import { rawRequest } from './gateway-client.ts';

describe(`Biscuits the gateway and the service send nodes, on ${databaseLabel()}`, () => {
  let db: Awaited<ReturnType<typeof openMigratedTestDb>>;
  let gateway: http.Server;
  let echo: http.Server;
  let echoOlder: http.Server;
  let base: string;
  let userId: string;
  let fullToken: string;
  let readOnlyToken: string;
  let keys: NodeRootKeyStore;
  let daemons: NodeDaemons;
  let rln: RlnClient;
  let node: Awaited<ReturnType<typeof insertNode>>;
  const nodeIds = { keyed: '', older: '' };
  const seen: Array<{ url: string; authorization: string[] }> = [];
  const dir = mkdtempSync(join(tmpdir(), 'node-biscuits-'));

  const last = () => seen[seen.length - 1]!;
  const gateFor = async (nodeId: string) => new TokenGate(await keys.publicKeyFor(nodeId), RevokedTokens.load(dir));
  const refusal = (gate: TokenGate, authorization: string, path: string) => {
    try {
      gate.check(authorization, path);
      return 'allowed';
    } catch (err) {
      return (err as { rlnName: string }).rlnName;
    }
  };

  beforeAll(async () => {
    db = await openMigratedTestDb();
    const record: http.RequestListener = (req, res) => {
      const authorization: string[] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === 'authorization') authorization.push(req.rawHeaders[i + 1]!);
      seen.push({ url: req.url!, authorization });
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    };
    echo = http.createServer(record);
    echoOlder = http.createServer(record);
    const ports = { keyed: await freePort(), older: await freePort() };
    await new Promise<void>((r) => echo.listen(ports.keyed, '127.0.0.1', r));
    await new Promise<void>((r) => echoOlder.listen(ports.older, '127.0.0.1', r));

    const accounts = new AccountService(db.db);
    const user = await accounts.createUser({ email: `biscuits-${Date.now()}@example.com` });
    userId = user.id;
    fullToken = (await accounts.createToken(user.email)).token;
    readOnlyToken = (await accounts.createToken(user.email, 'reader', undefined, { readOnly: true })).token;
    await db.db.query(`INSERT INTO image_versions (version) VALUES ('v1')`);
    for (const name of ['keyed', 'older'] as const) {
      node = await insertNode(db.db, { id: newId(), userId, name, network: 'regtest', status: 'STARTING', desiredState: 'running', imageVersion: 'v1', settings: {}, restPort: ports[name], peerPort: ports[name] + 1 });
      await updateNode(db.db, node.id, { status: 'RUNNING' });
      nodeIds[name] = node.id;
    }

    const log = pino({ level: 'silent' });
    keys = new NodeRootKeyStore({ db: db.db, seal: loadUnlockSeal(join(dir, 'seal.key'), { createIfMissing: true }) });
    const biscuits = new NodeBiscuits({ keys, log });
    await biscuits.publicKeyFor(nodeIds.keyed); // as the runtime does when it starts the node
    const config = loadConfig({});
    rln = new RlnClient({ timeoutMs: 2000, maxRequestBytes: 1 << 20, maxResponseBytes: 1 << 20 });
    const nodes = new NodeService({ db: db.db, config, runtime: { assignPorts: async () => undefined }, webhooks: { checkWebhookUrl: async (url) => url } });
    daemons = new NodeDaemons(
      { endpoint: (spec) => ({ host: '127.0.0.1', port: spec.restPort! }), storageFiles: { clientBackupPath: (_nodeId, name) => `/nonexistent/${name}`, prepareClientBackups: async () => {} } },
      rln,
      biscuits,
    );
    const unlocker = new NodeUnlocker({ db: db.db, config: config.nodeAccess, nodes, daemons, log });
    const nodePaths = new NodePaths({ unlocker, nodes, daemons, log });
    gateway = createBearerGateway({ access: new NodeAccess({ db: db.db, accounts }), rln, nodePaths, bearers: biscuits, clientTimeoutMs: 2000, log });
    const port = await freePort();
    await new Promise<void>((r) => gateway.listen(port, '127.0.0.1', r));
    base = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    for (const s of [gateway, echo, echoOlder]) {
      if (!s) continue;
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
    await rln?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const viaGateway = (token: string, nodeId: string, route: string, method = 'GET') =>
    rawRequest(base, `/${userId}/${nodeId}/${route}`, { method, headers: { authorization: `Bearer ${token}`, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) }, body: method === 'POST' ? '{}' : undefined });

  it("replaces a full token with an admin Biscuit of the node's root key, and reuses it", async () => {
    expect((await viaGateway(fullToken, nodeIds.keyed, 'address', 'POST')).status).toBe(200);
    const first = last().authorization;
    expect(first).toHaveLength(1);
    expect(first[0]).toMatch(/^Bearer [A-Za-z0-9_-]+=*$/);
    expect(first[0]).not.toContain(fullToken);
    const gate = await gateFor(nodeIds.keyed);
    expect(refusal(gate, first[0]!, '/address')).toBe('allowed');
    expect(refusal(gate, first[0]!, '/init')).toBe('allowed');
    expect((await viaGateway(fullToken, nodeIds.keyed, 'nodeinfo')).status).toBe(200);
    expect(last().authorization).toEqual(first); // minted once per node and role
  });

  it('replaces a read-only token with a read-only Biscuit, which the node itself keeps to reads', async () => {
    expect((await viaGateway(readOnlyToken, nodeIds.keyed, 'nodeinfo')).status).toBe(200);
    const [sent] = last().authorization;
    const gate = await gateFor(nodeIds.keyed);
    expect(refusal(gate, sent!, '/nodeinfo')).toBe('allowed');
    expect(refusal(gate, sent!, '/address')).toBe('Forbidden');
    expect(refusal(gate, sent!, '/unlock')).toBe('Forbidden');
  });

  it("gives another node's key no power here", async () => {
    await viaGateway(fullToken, nodeIds.keyed, 'nodeinfo');
    const other = new NodeRootKeyStore({ db: db.db, seal: loadUnlockSeal(join(dir, 'seal.key'), { createIfMissing: false }) });
    const otherId = newId();
    await insertNode(db.db, { id: otherId, userId, name: 'third', network: 'regtest', status: 'STARTING', desiredState: 'running', imageVersion: 'v1', settings: {}, restPort: 1, peerPort: 2 });
    const gate = new TokenGate(await other.publicKeyFor(otherId), RevokedTokens.load(dir));
    expect(refusal(gate, last().authorization[0]!, '/nodeinfo')).toBe('Unauthorized');
  });

  it("carries an admin Biscuit on the service's own calls (the unlock the gateway composes, nodeinfo)", async () => {
    const r = await rawRequest(base, `/${userId}/${nodeIds.keyed}/unlock`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fullToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ password: 'node-password-123' }),
    });
    expect(r.status).toBe(200);
    expect(last().url).toBe('/unlock');
    const gate = await gateFor(nodeIds.keyed);
    expect(refusal(gate, last().authorization[0]!, '/unlock')).toBe('allowed');
    expect((await daemons.of(node).nodeInfo()).status).toBe(200);
    expect(last().url).toBe('/nodeinfo');
    expect(last().authorization).toEqual([]); // `node` is the older one: no key, nothing sent
  });

  it('sends nothing to a node created before root keys existed (it runs without authentication)', async () => {
    expect((await viaGateway(fullToken, nodeIds.older, 'nodeinfo')).status).toBe(200);
    expect(last().authorization).toEqual([]);
  });
});
