// Issue #43's "Done when", on the process runtime, as one story over real HTTP with real devnode
// daemons: a node with continuous state makes state changes (receive addresses: the index is its
// node state, written to the service's VSS store before each address is answered); its storage
// directory is deleted; it reads STORAGE_LOST; recover and the wallet's mnemonic, given through
// the node path as a client would, bring it back with the same wallet (node pubkey) and the same
// state (the address index continues where it was: only VSS had it); a stale copy of its old
// storage that comes back is refused by the fence, and the recovered node's state stays as it was.
// Throughout, the service keeps the mnemonic nowhere: not in node_events, audit_events nor a line of
// its log (captured at trace level).
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggerOptions } from '../../src/logger.ts';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createTenants } from '../helpers/tenants.ts';
import { cleanUpDevnodes, startNode, stopNode, tempStorage, type DevnodeProcess } from '../../devnode/process-for-tests.ts';
import { receiveAddress } from '../../devnode/address.ts';
import { deriveIdentity } from '../../devnode/wallet.ts';
import { generateMnemonic } from '../../devnode/mnemonic.ts';

const PASSWORD = 'continuous-state-recovery-1';
const ADDRESSES_BEFORE_LOSS = 4;

describe(`a node with continuous state loses its storage and comes back from VSS (process runtime), on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let nodeId: string;
  /** The wallet's recovery phrase: the customer's, never the service's. */
  const mnemonic = generateMnemonic();
  /** Every line the service logged, at trace level. */
  const logLines: string[] = [];
  let pubkey: string;
  const issuedBeforeLoss: string[] = [];
  /** A copy of the node's storage taken before the loss: what a stale copy of the node would run on. */
  const staleStorage = tempStorage();
  let stale: DevnodeProcess | undefined;

  const api = (path: string, init: { method?: string; body?: unknown } = {}) => t.call(path, { ...init, token: alice.token });
  /** The node path (the bearer gateway), as a client calls RLN. */
  const node = async (route: string, body?: unknown) => {
    const res = await fetch(`${t.config.nodeApiUrl}/${alice.id}/${nodeId}/${route}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as any };
  };
  const status = async () => (await api(`/api/nodes/${nodeId}`)).json.data.status as string;
  const storage = () => join(t.config.dataDir, 'nodes', nodeId, 'storage');
  /** The n-th receive address of the wallet (devnode derives them from the mnemonic and n, as a wallet would). */
  const addressAt = (index: number) => receiveAddress('regtest', deriveIdentity(mnemonic).addressSeed, index);
  /** The node's store in the service: its keys, and the bytes it holds. */
  const store = async () => {
    const rows = await t.server.db.query<{ key: string; bytes: number }>('SELECT key, bytes::float8 AS bytes FROM vss_objects WHERE node_id = $1 ORDER BY key', [nodeId]);
    return { keys: rows.map((r) => r.key), bytes: rows.reduce((sum, r) => sum + r.bytes, 0) };
  };
  const newAddress = async () => {
    const r = await node('address', {});
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    return r.json.address as string;
  };
  /** The URL the runtime started the node's daemon with (`--vss-url`), from its command line. */
  const daemonVssUrl = async () => {
    const { pid } = await t.server.runtime.status(nodeId);
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    expect(args).toContain('--vss-url');
    return args[args.indexOf('--vss-url') + 1]!;
  };

  beforeAll(async () => {
    const log = pino(loggerOptions('trace'), { write: (line: string) => void logLines.push(line) });
    t = await startTestServer({}, { log });
    ({ alice } = await createTenants(t));
    const created = await api('/api/nodes', { method: 'POST', body: { name: 'continuous', network: 'regtest', settings: { continuousState: true } } });
    expect(created.status, created.text).toBe(200);
    nodeId = created.json.data.nodeId;
    await t.waitForStatus(alice, nodeId, 'RUNNING');
  });
  afterAll(async () => {
    if (stale) await stopNode(stale);
    await t?.stop();
    cleanUpDevnodes();
  });

  it('1. initialised with a mnemonic and unlocked through the node path, it writes each state change to its VSS store', async () => {
    expect((await api(`/api/nodes/${nodeId}`)).json.data.continuousState).toBe(true);
    const init = await node('init', { password: PASSWORD, mnemonic });
    expect(init.status, JSON.stringify(init.json)).toBe(200);
    expect((await node('unlock', { password: PASSWORD })).status).toBe(200);
    pubkey = (await node('nodeinfo')).json.pubkey;
    expect(pubkey).toMatch(/^0[23][0-9a-f]{64}$/);
    // Unlocked, the node holds the fence and has written no state yet.
    expect((await node('vssbackupinfo')).json).toMatchObject({ backup_exists: false, pending_kv_writes: 0 });
    expect((await store()).keys).toEqual(['__rln_instance__']);
    const fenceOnly = (await store()).bytes;

    for (let i = 0; i < ADDRESSES_BEFORE_LOSS; i++) issuedBeforeLoss.push(await newAddress());
    expect(issuedBeforeLoss).toEqual([0, 1, 2, 3].map(addressAt));
    // Each address was answered once its index was in the store: the store grew with the node's state.
    expect((await node('vssbackupinfo')).json).toEqual({ backup_exists: true, server_version: 1, backup_required: false, pending_kv_writes: 0 });
    const written = await store();
    expect(written.keys).toEqual(['__rln_instance__', 'manager']);
    expect(written.bytes).toBeGreaterThan(fenceOnly);

    // What a stale copy of the node would run on: its storage as it is now.
    cpSync(storage(), staleStorage, { recursive: true });
  });

  it('2. its storage directory deleted, it reads STORAGE_LOST (the event, and the status)', async () => {
    rmSync(storage(), { recursive: true, force: true });
    await expect.poll(status, { timeout: 20_000 }).toBe('STORAGE_LOST');
    expect((await api(`/api/nodes/${nodeId}`)).json.data).toMatchObject({ status: 'STORAGE_LOST', locked: true });
    const events = await t.server.db.query<{ payload: any }>(`SELECT payload FROM node_events WHERE node_id = $1 AND event_type = 'NODE_STORAGE_LOST'`, [nodeId]);
    expect(events.map((e) => e.payload.details)).toEqual([{ nodeId, detectedBy: 'volume', reason: expect.stringContaining('volume is gone') }]);
    // The timeline shows an event once every transaction older than it has ended (db/node-event-feed.ts):
    // on a PostgreSQL server shared with other work, that can be a moment after it committed.
    await expect.poll(async () => (await api(`/api/nodes/${nodeId}/events`)).text, { timeout: 15_000 }).toContain('NODE_STORAGE_LOST');
    await expect.poll(async () => (await t.server.runtime.status(nodeId)).state, { timeout: 15_000 }).not.toBe('running');
    // The node's state is still in its store.
    expect((await store()).keys).toContain('manager');
  });

  it('3. recovered and given the mnemonic, it is the same wallet with the same state: the address index continues from VSS', async () => {
    const recovered = await api(`/api/nodes/${nodeId}/recover`, { method: 'POST' });
    expect(recovered.status, recovered.text).toBe(200);
    await expect.poll(status, { timeout: 30_000 }).toBe('RUNNING');
    expect((await api(`/api/nodes/${nodeId}`)).json.data).toMatchObject({ locked: true, initialized: false });

    const init = await node('init', { password: PASSWORD, mnemonic });
    expect(init.status, JSON.stringify(init.json)).toBe(200);
    const unlocked = await node('unlock', { password: PASSWORD });
    expect(unlocked.status, JSON.stringify(unlocked.json)).toBe(200);
    expect((await node('nodeinfo')).json.pubkey).toBe(pubkey);
    // A wallet from the mnemonic alone would start again at address 0; this one goes on at 4.
    const next = await newAddress();
    expect(issuedBeforeLoss).not.toContain(next);
    expect(next).toBe(addressAt(ADDRESSES_BEFORE_LOSS));
    issuedBeforeLoss.push(next);
  });

  it('4. a stale copy of the old storage, on the same VSS URL, is refused by the fence; the recovered node is unaffected', async () => {
    const url = await daemonVssUrl();
    expect(url.startsWith(`${t.config.publicUrl}/vss/${nodeId}/`)).toBe(true);
    const storeBefore = await t.server.db.query<{ key: string; value: Buffer }>('SELECT key, value FROM vss_objects WHERE node_id = $1 ORDER BY key', [nodeId]);

    stale = await startNode(staleStorage, { auth: ['--disable-authentication', '--vss-url', url] });
    const refused = await stale.call('POST', '/unlock', { password: PASSWORD });
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(refused.body.name).toBe('VssFenced');
    // It wrote nothing: the store is as the recovered node left it, fence and state.
    const storeAfter = await t.server.db.query<{ key: string; value: Buffer }>('SELECT key, value FROM vss_objects WHERE node_id = $1 ORDER BY key', [nodeId]);
    expect(storeAfter.map((r) => [r.key, Buffer.from(r.value).toString('hex')])).toEqual(storeBefore.map((r) => [r.key, Buffer.from(r.value).toString('hex')]));
    await stopNode(stale);
    stale = undefined;

    // The recovered node still holds the fence and goes on from where it was.
    expect((await node('vssbackupinfo')).json).toMatchObject({ backup_exists: true, backup_required: false, pending_kv_writes: 0 });
    expect(await newAddress()).toBe(addressAt(ADDRESSES_BEFORE_LOSS + 1));
  });

  it('5. the service never stored nor logged the mnemonic', async () => {
    expect(logLines.length).toBeGreaterThan(0);
    // Any four of its words in a row would give it away; so would the whole phrase.
    const words = mnemonic.split(' ');
    const fragments = [mnemonic, ...[0, 4, 8].map((i) => words.slice(i, i + 4).join(' '))];
    const tables = {
      node_events: await t.server.db.query<{ text: string }>('SELECT payload::text AS text FROM node_events'),
      audit_events: await t.server.db.query<{ text: string }>('SELECT details::text AS text FROM audit_events'),
    };
    for (const [table, rows] of Object.entries(tables)) {
      expect(rows.length, table).toBeGreaterThan(0);
      const text = rows.map((r) => r.text).join('\n');
      for (const fragment of fragments) expect(text, table).not.toContain(fragment);
    }
    const logged = logLines.join('');
    for (const fragment of fragments) expect(logged).not.toContain(fragment);
  });
});
