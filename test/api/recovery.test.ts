// Recovery from a recovery phrase through real HTTP with real devnode daemons: POST
// /api/nodes/{id}/init with `mnemonic`, and RLN's /init through the bearer gateway, recover the
// wallet of the node the phrase came from (same node pubkey, same first address). Bad types are a
// 400, another user's attempt a 404, and the phrase appears in no log line (the service's, at the
// most verbose level, and every file of its DATA_DIR: node logs, PGlite's files), no database row
// and no answer.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/app.ts';
import { loggerOptions } from '../../src/logger.ts';
import { createTestDatabase, databaseLabel, type TestDatabase } from '../helpers/database.ts';
import { apiCaller, testConfig, type TestUser } from '../helpers/server.ts';
import { rawRequest } from '../gateway/gateway-client.ts';

const PASSWORD = 'recovery-password-1';

describe(`recovery from a recovery phrase on ${databaseLabel()}`, () => {
  let server: RunningServer;
  let database: TestDatabase;
  let dataDir: string;
  let call: ReturnType<typeof apiCaller>;
  let alice: TestUser;
  let bob: TestUser;
  /** Every line the service logged, at trace level. */
  const logLines: string[] = [];
  /** Every answer a test got, to look for the phrase in. */
  const answers: string[] = [];
  let phrase: string;
  let original: { pubkey: string; address: string };
  let firstId: string;
  let recoveredId: string;
  const identityEvents = async (id: string) =>
    server.db.query<{ payload: any }>(`SELECT payload FROM node_events WHERE node_id = $1 AND event_type = 'NODE_IDENTITY_SHARED'`, [id]);
  const identityAudits = async (id: string) =>
    server.db.query<{ details: any; actor: string }>(`SELECT details, actor FROM audit_events WHERE target = $1 AND action = 'node.identity_shared'`, [id]);

  const users = async (plan: 'starter' | 'scale', email: string) => {
    const user = await server.services.accounts.createUser({ email, plan });
    const token = await server.services.accounts.createToken(email, 'test');
    return { id: user.id, email, token: token.token, tokenId: token.id };
  };
  const api = async (user: TestUser, path: string, opts: { method?: string; body?: unknown } = {}) => {
    const r = await call(path, { ...opts, token: user.token });
    answers.push(r.text);
    return r;
  };
  const gateway = async (user: TestUser, id: string, route: string, method = 'GET', body?: object) => {
    const r = await rawRequest(server.config.nodeApiUrl, `/${user.id}/${id}/${route}`, {
      method,
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    answers.push(r.text);
    return r;
  };
  const runningNode = async (user: TestUser, name: string) => {
    const id = (await api(user, '/api/nodes', { method: 'POST', body: { name, network: 'regtest' } })).json.data.nodeId as string;
    const r = await api(user, `/api/nodes/${id}?waitFor=RUNNING&timeout=45`);
    expect(r.json.data.status).toBe('RUNNING');
    return id;
  };
  /** What the last unlock of `identity` warned, the management API's `warnings` or the gateway's headers. */
  let warned: Array<{ code: string; message: string }> = [];
  /** Unlocks (through the management API, or the gateway) and reads the wallet's identity through the gateway. */
  const identity = async (user: TestUser, id: string, unlockThrough: 'api' | 'gateway' = 'api') => {
    if (unlockThrough === 'api') {
      const unlock = await api(user, `/api/nodes/${id}/unlock`, { method: 'POST', body: { password: PASSWORD } });
      expect(unlock.status, unlock.text).toBe(200);
      warned = unlock.json.warnings ?? [];
    } else {
      const unlock = await gateway(user, id, 'unlock', 'POST', { password: PASSWORD });
      expect(unlock.status, unlock.text).toBe(200);
      expect(unlock.json).toEqual({});
      const header = unlock.headers['x-rln-cloud-warning'];
      warned = (header === undefined ? [] : [header].flat()).map((h) => ({ code: h.split(': ')[0]!, message: h.slice(h.indexOf(': ') + 2) }));
    }
    const info = await gateway(user, id, 'nodeinfo');
    expect(info.status, info.text).toBe(200);
    const address = await gateway(user, id, 'address', 'POST', {});
    expect(address.status, address.text).toBe(200);
    return { pubkey: info.json.pubkey as string, address: address.json.address as string };
  };
  const initialized = async (id: string) =>
    (await server.db.query<{ initialized: boolean }>('SELECT initialized FROM nodes WHERE id = $1', [id]))[0]!.initialized;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rln-recovery-'));
    database = await createTestDatabase();
    const log = pino(loggerOptions('trace'), { write: (line: string) => void logLines.push(line) });
    server = await startServer(await testConfig(dataDir, database.url), log);
    call = apiCaller(server.config.publicUrl);
    alice = await users('scale', `alice-${Date.now()}@example.com`);
    bob = await users('starter', `bob-${Date.now()}@example.com`);
    const first = await runningNode(alice, 'lost');
    const init = await api(alice, `/api/nodes/${first}/init`, { method: 'POST', body: { password: PASSWORD } });
    expect(init.status, init.text).toBe(200);
    expect(init.json.data.recovered).toBe(false);
    phrase = init.json.data.mnemonic;
    expect(phrase.split(' ')).toHaveLength(12);
    original = await identity(alice, first);
    expect(warned).toEqual([]);
    firstId = first;
    // Shown once, at its creation: the only answer allowed to carry it.
    answers.length = 0;
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('recovers the same wallet through the management API, without echoing the phrase', async () => {
    const id = await runningNode(alice, 'recovered');
    const r = await api(alice, `/api/nodes/${id}/init`, { method: 'POST', body: { password: PASSWORD, mnemonic: `  ${phrase.replaceAll(' ', '  ')}\n` } });
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.json.data).toEqual({ recovered: true });
    expect(r.json.message).toMatch(/still runs, stop or destroy it/);
    expect(await initialized(id)).toBe(true);
    expect(await identity(alice, id)).toEqual(original);
    recoveredId = id;
    // The first node still runs: one wallet on two live nodes is warned about and recorded.
    expect(warned).toEqual([{ code: 'identity_shared', message: expect.stringContaining(`your node ${firstId}`) }]);
    expect(warned[0]!.message).toContain(original.pubkey);
    expect((await identityEvents(id)).map((e) => e.payload.details)).toEqual([{ nodeId: id, pubkey: original.pubkey, sharedWith: [firstId], otherAccounts: 0 }]);
    expect(await identityAudits(id)).toEqual([{ actor: 'service', details: { pubkey: original.pubkey, sharedWith: [firstId], otherAccounts: 0 } }]);
    expect(await identityEvents(firstId)).toEqual([]);
  }, 90_000);

  it("recovers the same wallet with RLN's /init through the bearer gateway", async () => {
    const id = await runningNode(alice, 'through the gateway');
    const r = await gateway(alice, id, 'init', 'POST', { password: PASSWORD, mnemonic: phrase });
    expect(r.status, r.text).toBe(200);
    // RLN's own answer passes through unchanged: it names the wallet's mnemonic (see the README).
    expect(r.json).toEqual({ mnemonic: phrase });
    answers.pop();
    expect(await initialized(id)).toBe(true);
    // Unlocked through the gateway: RLN's answer unchanged, the warning in a header of the service's.
    expect(await identity(alice, id, 'gateway')).toEqual(original);
    expect(warned).toEqual([{ code: 'identity_shared', message: expect.stringContaining(`your nodes ${firstId}, ${recoveredId}`) }]);
    expect(await identityEvents(id)).toHaveLength(1);
  }, 90_000);

  it('warns without naming them about nodes of another account, and not about destroyed nodes', async () => {
    const bobs = await runningNode(bob, 'bob recovers alice’s phrase');
    expect((await api(bob, `/api/nodes/${bobs}/init`, { method: 'POST', body: { password: PASSWORD, mnemonic: phrase } })).status).toBe(200);
    expect(await identity(bob, bobs)).toEqual(original);
    expect(warned).toEqual([{ code: 'identity_shared', message: expect.stringContaining('3 nodes of another account') }]);
    expect(warned[0]!.message).not.toContain(firstId);
    expect((await identityEvents(bobs))[0]!.payload.details).toMatchObject({ sharedWith: [], otherAccounts: 3 });
    // Once bob's node is destroyed it no longer counts for alice's.
    expect((await api(bob, '/api/nodes', { method: 'DELETE', body: { destroyNodeId: bobs } })).status).toBe(200);
    expect((await api(bob, `/api/nodes/${bobs}?waitFor=DESTROYED&timeout=45`)).json.data.status).toBe('DESTROYED');
    const lock = await gateway(alice, firstId, 'lock', 'POST', {});
    expect(lock.status, lock.text).toBe(200);
    await identity(alice, firstId);
    expect(warned).toHaveLength(1);
    expect(warned[0]!.message).not.toContain('another account');
  }, 120_000);

  it('answers 400 to a mnemonic of the wrong type, and to one the node refuses, quoting neither', async () => {
    const id = await runningNode(alice, 'refused');
    for (const mnemonic of [123, null, [phrase], { phrase }, true, '', 'x'.repeat(1025)]) {
      const r = await api(alice, `/api/nodes/${id}/init`, { method: 'POST', body: { password: PASSWORD, mnemonic } });
      expect(r.status, `${JSON.stringify(mnemonic).slice(0, 40)}: ${r.text}`).toBe(400);
      expect(r.json.error.code).toBe('invalid_request');
      expect(r.text).toMatch(/mnemonic/);
      if (typeof mnemonic === 'string' && mnemonic) expect(r.text).not.toContain(mnemonic);
    }
    // Not a phrase the node takes (seven words): its refusal, and the words nowhere in it.
    const words = phrase.split(' ').slice(0, 7).join(' ');
    const refused = await api(alice, `/api/nodes/${id}/init`, { method: 'POST', body: { password: PASSWORD, mnemonic: words } });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.json.error).toMatchObject({ code: 'invalid_request', details: { nodeError: 'InvalidMnemonic' } });
    expect(refused.text).not.toContain(words);
    expect(await initialized(id)).toBe(false);
    // Invalid JSON around a phrase is refused without quoting the body.
    const broken = await call(`/api/nodes/${id}/init`, { method: 'POST', token: alice.token, body: `{"password": "${PASSWORD}", "mnemonic": "${phrase}"` });
    expect(broken.status).toBe(400);
    expect(broken.text).not.toContain(phrase);
    expect(await initialized(id)).toBe(false);
  }, 90_000);

  it("answers 404 to another user's recovery on a node that is not theirs, and leaves the node as it was", async () => {
    const id = await runningNode(alice, 'not bob’s');
    const r = await api(bob, `/api/nodes/${id}/init`, { method: 'POST', body: { password: PASSWORD, mnemonic: phrase } });
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('node_not_found');
    const viaGateway = await gateway(bob, id, 'init', 'POST', { password: PASSWORD, mnemonic: phrase });
    expect(viaGateway.status).toBe(404);
    expect(await initialized(id)).toBe(false);
  }, 90_000);

  it('leaves the phrase in no log line, no database row, no file of DATA_DIR and no answer', async () => {
    expect(logLines.length).toBeGreaterThan(5); // start-up, jobs, builds: the API logs no request lines (disableRequestLogging)
    const leaks = (text: string) => text.includes(phrase) || text.includes(phrase.split(' ').slice(0, 4).join(' '));
    expect(logLines.filter(leaks)).toEqual([]);
    expect(answers.filter(leaks)).toEqual([]);
    const tables = await server.db.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
    );
    expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(['audit_events', 'idempotency_keys', 'node_events', 'nodes']));
    for (const { table_name } of tables) {
      const rows = await server.db.query<{ row: string }>(`SELECT t::text AS row FROM "${table_name}" t`);
      expect(rows.map((r) => r.row).filter(leaks), table_name).toEqual([]);
    }
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const path = join(dir, name);
        return statSync(path).isDirectory() ? files(path) : [path];
      });
    const leakingFiles = files(dataDir).filter((path) => readFileSync(path).includes(phrase));
    expect(leakingFiles).toEqual([]);
  });
});
