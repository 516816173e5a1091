// devnode with --root-public-key enforces RLN's Biscuit authentication (RLN's src/auth.rs): each test
// starts the real process and talks to it over HTTP with tokens minted by the service's own minter.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateRootKey, mintNodeToken, type NodeTokenClaims } from '../src/rln/biscuit-mint.ts';
import { cleanUpDevnodes, spawnDevnode, startNode, stopNode, tempStorage, type DevnodeProcess } from './process-for-tests.ts';

const PASSWORD = 'correct horse battery';
const UNAUTHORIZED = { status: 401, body: { error: 'Missing or invalid credentials', code: 401, name: 'Unauthorized' } };
const FORBIDDEN = { status: 403, body: { error: "You don't have access to this resource", code: 403, name: 'Forbidden' } };
const LOCKED = { status: 403, body: { error: 'Node is locked (hint: call unlock)', code: 403, name: 'LockedNode' } };

afterAll(cleanUpDevnodes);

const root = generateRootKey();
const inAMinute = () => new Date(Date.now() + 60_000);
const mint = (claims: Partial<NodeTokenClaims> & Pick<NodeTokenClaims, 'role'>, key = root.privateKey) =>
  mintNodeToken(key, { expiresAt: inAMinute(), ...claims }).token;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('devnode with --root-public-key', () => {
  const storage = tempStorage();
  let node: DevnodeProcess;
  const admin = mint({ role: 'admin' });
  const readOnly = mint({ role: 'read-only' });

  beforeAll(async () => {
    node = await startNode(storage, { auth: ['--root-public-key', root.publicKeyHex] });
    expect(node.stdout()).toContain('authentication biscuit tokens of the root key');
    expect((await node.call('POST', '/init', { password: PASSWORD }, bearer(admin))).status).toBe(200);
  });

  it('answers 401 without a token, with another scheme, a prefix not exactly `Bearer `, garbage or another key', async () => {
    const other = generateRootKey();
    for (const authorization of [
      undefined,
      `Basic ${Buffer.from('a:b').toString('base64')}`,
      `bearer ${admin}`,
      `Bearer  ${admin}`,
      admin,
      'Bearer not-a-biscuit',
      `Bearer ${mint({ role: 'admin' }, other.privateKey)}`,
    ]) {
      expect(await node.call('GET', '/nodeinfo', undefined, authorization === undefined ? {} : { authorization }), String(authorization)).toEqual(UNAUTHORIZED);
    }
  });

  it('answers 401 to an expired token and to one with no known role', async () => {
    expect(await node.call('GET', '/nodeinfo', undefined, bearer(mint({ role: 'admin', expiresAt: new Date(Date.now() - 1000) })))).toEqual(UNAUTHORIZED);
    expect(await node.call('GET', '/nodeinfo', undefined, bearer(mint({ role: 'owner' as 'admin' })))).toEqual(UNAUTHORIZED);
  });

  it('checks the token before the body and the node state, but not on unknown paths', async () => {
    expect(await node.call('POST', '/unlock', 'not json')).toEqual(UNAUTHORIZED);
    expect(await node.call('GET', '/nodeinfo', undefined, bearer(admin))).toEqual(LOCKED);
    expect((await node.call('GET', '/no-such-route')).status).toBe(404);
    expect(await node.call('GET', '/unlock')).toEqual(UNAUTHORIZED); // known path, wrong method
  });

  it('lets an admin token call everything', async () => {
    expect(await node.call('POST', '/unlock', { password: PASSWORD }, bearer(admin))).toEqual({ status: 200, body: {} });
    expect((await node.call('GET', '/nodeinfo', undefined, bearer(admin))).status).toBe(200);
    expect((await node.call('POST', '/address', {}, bearer(admin))).status).toBe(200);
  });

  it("lets a read-only token call RLN's read-only routes only", async () => {
    expect((await node.call('GET', '/nodeinfo', undefined, bearer(readOnly))).status).toBe(200);
    expect((await node.call('GET', '/networkinfo', undefined, bearer(readOnly))).status).toBe(200);
    expect((await node.call('POST', '/btcbalance', { skip_sync: true }, bearer(readOnly))).status).toBe(200);
    expect(await node.call('POST', '/address', {}, bearer(readOnly))).toEqual(FORBIDDEN);
    expect(await node.call('POST', '/lock', undefined, bearer(readOnly))).toEqual(FORBIDDEN);
    expect(await node.call('POST', '/revoketoken', { token: admin }, bearer(readOnly))).toEqual(FORBIDDEN);
  });

  it('lets a custom token call exactly the routes it has right("api", route) for', async () => {
    const custom = mint({ role: 'custom', routes: ['/address', '/listpeers'] });
    expect((await node.call('POST', '/address', {}, bearer(custom))).status).toBe(200);
    expect((await node.call('GET', '/listpeers', undefined, bearer(custom))).status).toBe(200);
    expect(await node.call('GET', '/nodeinfo', undefined, bearer(custom))).toEqual(FORBIDDEN);
    // A route is a parameter, never Datalog text: a crafted one grants nothing more.
    const crafted = mint({ role: 'custom', routes: ['/address"); right("api", "/nodeinfo'] });
    expect(await node.call('GET', '/nodeinfo', undefined, bearer(crafted))).toEqual(FORBIDDEN);
  });

  it('revokes a whole token through POST /revoketoken, refuses a token that is not one, and keeps the list across a restart', async () => {
    const doomed = mint({ role: 'read-only' });
    expect((await node.call('GET', '/nodeinfo', undefined, bearer(doomed))).status).toBe(200);
    expect(await node.call('POST', '/revoketoken', { token: 'garbage' }, bearer(admin))).toEqual({
      status: 400,
      body: { error: 'Invalid Biscuit token', code: 400, name: 'InvalidBiscuitToken' },
    });
    expect((await node.call('POST', '/revoketoken', {}, bearer(admin))).body.name).toBe('InvalidRequest');
    expect(await node.call('POST', '/revoketoken', { token: doomed }, bearer(admin))).toEqual({ status: 200, body: {} });
    expect(await node.call('GET', '/nodeinfo', undefined, bearer(doomed))).toEqual(UNAUTHORIZED);
    expect((await node.call('GET', '/nodeinfo', undefined, bearer(readOnly))).status).toBe(200); // others unaffected
    expect(readFileSync(join(storage, 'revoked_tokens.txt'), 'utf8')).toMatch(/^([0-9a-f]{128}\n)+$/);

    expect(await stopNode(node)).toEqual({ code: 0, signal: null });
    node = await startNode(storage, { auth: ['--root-public-key', root.publicKeyHex] });
    expect(await node.call('GET', '/nodeinfo', undefined, bearer(doomed))).toEqual(UNAUTHORIZED);
    expect(await node.call('GET', '/nodeinfo', undefined, bearer(readOnly))).toEqual(LOCKED);
    expect(await stopNode(node)).toEqual({ code: 0, signal: null });
  });
});

describe('devnode authentication start-up and disabled mode', () => {
  it('answers /revoketoken with AuthenticationDisabled when started with --disable-authentication', async () => {
    const node = await startNode(tempStorage());
    expect(await node.call('POST', '/revoketoken', { token: mint({ role: 'admin' }) })).toEqual({
      status: 403,
      body: { error: 'Authentication is disabled', code: 403, name: 'AuthenticationDisabled' },
    });
    expect(await stopNode(node)).toEqual({ code: 0, signal: null });
  });

  it('refuses to start on a damaged revoked list, as RLN does', async () => {
    const storage = tempStorage();
    mkdirSync(storage, { recursive: true });
    writeFileSync(join(storage, 'revoked_tokens.txt'), 'abcd\nnot hex\n');
    const spawned = spawnDevnode([storage, '--daemon-listening-port', '1', '--ldk-peer-listening-port', '2', '--network', 'regtest', '--root-public-key', root.publicKeyHex]);
    expect((await spawned.exited).code).toBe(1);
    expect(spawned.stdout() + spawned.stderr()).toContain('revoked_tokens.txt:2 is not a hex revocation identifier');
  });

  it('refuses to start with 32 bytes that are not an ed25519 public key', async () => {
    const spawned = spawnDevnode([tempStorage(), '--daemon-listening-port', '1', '--ldk-peer-listening-port', '2', '--network', 'regtest', '--root-public-key', 'ab'.repeat(32)]);
    expect((await spawned.exited).code).toBe(1);
    expect(spawned.stdout() + spawned.stderr()).toContain('The provided root public key is invalid');
  });

  it('loads the Biscuit library without a warning on stderr', async () => {
    const node = await startNode(tempStorage(), { auth: ['--root-public-key', root.publicKeyHex] });
    expect((await node.call('GET', '/nodeinfo', undefined, bearer(mint({ role: 'admin' })))).status).toBe(403);
    expect(await stopNode(node)).toEqual({ code: 0, signal: null });
    expect(node.stderr()).toBe('');
    expect(node.stdout()).not.toContain('biscuit-wasm loading');
  });
});
