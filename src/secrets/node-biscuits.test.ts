// Each node's Biscuit root key and the tokens minted with it (issue #40), on the test database: the
// key is created once and sealed (bound to its node), rotation of the seal's key re-seals it, and
// tokens are minted once per node and role, renewed before they expire, and checked with devnode's
// copy of RLN's rules.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountService } from '../accounts/service.ts';
import { insertNode } from '../db/nodes.ts';
import { newId } from '../auth/tokens.ts';
import { RevokedTokens } from '../../devnode/revoked-tokens.ts';
import { TokenGate } from '../../devnode/token-gate.ts';
import { databaseLabel, openMigratedTestDb } from '../../test/helpers/database.ts';
import { NodeBiscuits, RENEW_BEFORE_MS, TOKEN_LIFETIME_MS } from './node-biscuits.ts';
import { NODE_ROOT_KEYS, NodeRootKeyStore } from './node-root-keys.ts';
import { loadUnlockSeal, SealError } from './unlock-seal.ts';
import { UnlockSealKeys } from './unlock-seal-keys.ts';

describe(`node root keys and Biscuits on ${databaseLabel()}`, () => {
  let db: Awaited<ReturnType<typeof openMigratedTestDb>>;
  const dir = mkdtempSync(join(tmpdir(), 'node-keys-'));
  const seal = loadUnlockSeal(join(dir, 'seal.json'), { createIfMissing: true });
  let keys: NodeRootKeyStore;
  const nodeIds: string[] = [];

  beforeAll(async () => {
    db = await openMigratedTestDb();
    keys = new NodeRootKeyStore({ db: db.db, seal });
    const user = await new AccountService(db.db).createUser({ email: `keys-${Date.now()}@example.com` });
    await db.db.query(`INSERT INTO image_versions (version) VALUES ('v1') ON CONFLICT DO NOTHING`);
    for (const name of ['one', 'two']) {
      const node = await insertNode(db.db, { id: newId(), userId: user.id, name, network: 'regtest', status: 'STARTING', desiredState: 'running', imageVersion: 'v1', settings: {}, restPort: null, peerPort: null });
      nodeIds.push(node.id);
    }
  });
  afterAll(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates a key once per node, keeps only its private half sealed, bound to the node', async () => {
    const [one, two] = nodeIds as [string, string];
    expect(await keys.privateKeyOf(one)).toBeUndefined();
    const publicKey = await keys.publicKeyFor(one);
    expect(publicKey).toMatch(/^[0-9a-f]{64}$/);
    expect(await keys.publicKeyFor(one)).toBe(publicKey);
    expect(await keys.publicKeyFor(two)).not.toBe(publicKey);
    const [row] = await db.db.query<{ sealed_private_key: string }>('SELECT sealed_private_key FROM node_root_keys WHERE node_id = $1', [one]);
    expect(row!.sealed_private_key).toMatch(/^us1\./);
    expect((await keys.privateKeyOf(one))!.length).toBe(32);
    // Copied onto another node's row, it does not open.
    await db.db.query('UPDATE node_root_keys SET sealed_private_key = $1 WHERE node_id = $2', [row!.sealed_private_key, two]);
    await expect(keys.privateKeyOf(two)).rejects.toThrow(SealError);
  });

  it("is re-sealed by a rotation of the seal's key (registered among the sealed stores)", async () => {
    const [one] = nodeIds as [string];
    const before = await keys.privateKeyOf(one);
    const result = await new UnlockSealKeys({ db: db.db, seal, stores: [NODE_ROOT_KEYS] }).rotate();
    expect(result.resealed).toBeGreaterThanOrEqual(1);
    expect(result.unreadable).toBe(1); // node two's copied value, left as it is
    expect(await keys.privateKeyOf(one)).toEqual(before);
  });

  it('mints one token per node and role, renewed shortly before it expires, of that role', async () => {
    const [one] = nodeIds as [string];
    let now = Date.now();
    const biscuits = new NodeBiscuits({ keys, log: pino({ level: 'silent' }), now: () => now });
    const admin = await biscuits.authorization(one, 'admin');
    const readOnly = await biscuits.authorization(one, 'read-only');
    expect(admin).toMatch(/^Bearer /);
    expect(biscuits.authorization(one, 'admin')).toBe(admin); // at once, from the cache
    const gate = new TokenGate(await keys.publicKeyFor(one), RevokedTokens.load(dir));
    expect(() => gate.check(admin, '/init')).not.toThrow();
    expect(() => gate.check(readOnly, '/init')).toThrow(expect.objectContaining({ rlnName: 'Forbidden' }));
    now += TOKEN_LIFETIME_MS - RENEW_BEFORE_MS - 1000;
    expect(biscuits.authorization(one, 'admin')).toBe(admin);
    now += 2000;
    const renewed = await biscuits.authorization(one, 'admin');
    expect(renewed).not.toBe(admin);
  });

  it('mints nothing for a node without a key, and believes that only a few seconds', async () => {
    const userId = (await db.db.query<{ user_id: string }>('SELECT user_id FROM nodes WHERE id = $1', [nodeIds[0]]))[0]!.user_id;
    const later = await insertNode(db.db, { id: newId(), userId, name: 'older', network: 'regtest', status: 'STARTING', desiredState: 'running', imageVersion: 'v1', settings: {}, restPort: null, peerPort: null });
    const biscuits = new NodeBiscuits({ keys, log: pino({ level: 'silent' }) });
    expect(await biscuits.authorization(later.id, 'admin')).toBeUndefined();
    expect(biscuits.authorization(later.id, 'admin')).toBeUndefined(); // cached "no key"
    await biscuits.publicKeyFor(later.id); // the runtime starts it: a key now
    expect(await biscuits.authorization(later.id, 'admin')).toMatch(/^Bearer /);
  });

  it('does not remember "no key" from a lookup that raced the creation of the key', async () => {
    const real = keys;
    let releaseLookup!: () => void;
    const lookupHeld = new Promise<void>((resolve) => (releaseLookup = resolve));
    let first = true;
    const racing = {
      publicKeyFor: (nodeId: string) => real.publicKeyFor(nodeId),
      async privateKeyOf(nodeId: string) {
        if (!first) return real.privateKeyOf(nodeId);
        first = false;
        await lookupHeld; // read "no key" before the key was created...
        return undefined;
      },
    } as unknown as NodeRootKeyStore;
    const biscuits = new NodeBiscuits({ keys: racing, log: pino({ level: 'silent' }) });
    const userId = (await db.db.query<{ user_id: string }>('SELECT user_id FROM nodes WHERE id = $1', [nodeIds[0]]))[0]!.user_id;
    const fresh = await insertNode(db.db, { id: newId(), userId, name: 'racing', network: 'regtest', status: 'STARTING', desiredState: 'running', imageVersion: 'v1', settings: {}, restPort: null, peerPort: null });
    const early = biscuits.authorization(fresh.id, 'admin');
    await biscuits.publicKeyFor(fresh.id); // ...the runtime creates it meanwhile...
    releaseLookup();
    expect(await early).toBeUndefined(); // ...that caller asked before the key existed
    expect(await biscuits.authorization(fresh.id, 'admin')).toMatch(/^Bearer /); // the next one is not told "none"
  });
});
