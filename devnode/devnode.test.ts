// End-to-end tests of devnode: each starts the real process through bin/devnode.mjs, as the
// service's process runtime does, and talks to it over HTTP.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanUpDevnodes, freePort, spawnDevnode, startNode, stopNode, tempStorage, type DevnodeProcess } from './process-for-tests.ts';

const PASSWORD = 'correct horse battery';
const LOCKED = { error: 'Node is locked (hint: call unlock)', code: 403, name: 'LockedNode' };

afterAll(cleanUpDevnodes);

describe('devnode lifecycle across restarts', () => {
  const storage = tempStorage();
  let node: DevnodeProcess;
  let mnemonic: string;
  let pubkey: string;

  it('answers /nodeinfo on a fresh node with the exact LockedNode error', async () => {
    node = await startNode(storage);
    expect(await node.call('GET', '/nodeinfo')).toEqual({ status: 403, body: LOCKED });
    expect(node.stdout()).toMatch(/^\S+Z INFO devnode devnode started: network regtest, REST http:\/\/127\.0\.0\.1:\d+/m);
  });

  it('refuses unlock before init', async () => {
    expect(await node.call('POST', '/unlock', { password: PASSWORD })).toEqual({
      status: 403,
      body: { error: 'Wallet has not been initialized (hint: call init)', code: 403, name: 'NotInitialized' },
    });
  });

  it('inits with a password of at least 8 characters and returns a 12-word mnemonic', async () => {
    expect(await node.call('POST', '/init', { password: 'short' })).toEqual({
      status: 400,
      body: { error: 'Invalid password: must have at least 8 chars', code: 400, name: 'InvalidPassword' },
    });
    const res = await node.call('POST', '/init', { password: PASSWORD });
    expect(res.status).toBe(200);
    mnemonic = res.body.mnemonic;
    expect(mnemonic.split(' ')).toHaveLength(12);
    expect((await node.call('POST', '/init', { password: PASSWORD })).body.name).toBe('AlreadyInitialized');
  });

  it('rejects a wrong password and unlocks with the right one (current upstream body)', async () => {
    expect(await node.call('POST', '/unlock', { password: 'not the password' })).toEqual({
      status: 401,
      body: { error: 'The provided password is incorrect', code: 401, name: 'WrongPassword' },
    });
    const current = {
      password: PASSWORD,
      ldk_chain_sync: { mode: 'BlockSync', config: { bitcoind_rpc_username: 'u', bitcoind_rpc_password: 'p', bitcoind_rpc_host: 'localhost', bitcoind_rpc_port: 18443 } },
      indexer_url: 'tcp://localhost:50001',
      announce_addresses: [],
      announce_alias: 'devnode-test',
      some_future_field: true,
    };
    expect(await node.call('POST', '/unlock', current)).toEqual({ status: 200, body: {} });
    expect((await node.call('POST', '/unlock', current)).body.name).toBe('AlreadyUnlocked');
  });

  it('serves the node endpoints once unlocked', async () => {
    const info = await node.call('GET', '/nodeinfo');
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({ num_channels: 0, num_usable_channels: 0, local_balance_sat: 0, num_peers: 0 });
    expect(info.body.pubkey).toMatch(/^0[23][0-9a-f]{64}$/);
    pubkey = info.body.pubkey;
    expect(await node.call('GET', '/networkinfo')).toMatchObject({ status: 200, body: { network: 'Regtest' } });
    expect((await node.call('POST', '/address', {})).body.address).toMatch(/^bcrt1q[02-9ac-hj-np-z]{38}$/);
    const zero = { settled: 0, future: 0, spendable: 0 };
    expect(await node.call('POST', '/btcbalance', { skip_sync: true })).toEqual({ status: 200, body: { vanilla: zero, colored: zero } });
    expect(await node.call('GET', '/listchannels')).toEqual({ status: 200, body: { channels: [] } });
    expect(await node.call('GET', '/listpeers')).toEqual({ status: 200, body: { peers: [] } });
  });

  it('locks again', async () => {
    expect((await node.call('POST', '/changepassword', { old_password: PASSWORD, new_password: 'another password' })).body.name).toBe('UnlockedNode');
    expect(await node.call('POST', '/lock')).toEqual({ status: 200, body: {} });
    expect(await node.call('GET', '/nodeinfo')).toEqual({ status: 403, body: LOCKED });
    expect(await node.call('POST', '/lock')).toEqual({ status: 403, body: LOCKED });
  });

  it('comes back locked but initialized after a restart; the older flat unlock body works', async () => {
    expect(await stopNode(node)).toEqual({ code: 0, signal: null });
    node = await startNode(storage);
    expect(node.stdout()).toContain('wallet initialized, locked');
    expect(await node.call('GET', '/nodeinfo')).toEqual({ status: 403, body: LOCKED });
    expect((await node.call('POST', '/init', { password: PASSWORD })).body).toEqual({
      error: 'Node has already been initialized', code: 403, name: 'AlreadyInitialized',
    });
    const flat = {
      password: PASSWORD,
      bitcoind_rpc_username: 'user',
      bitcoind_rpc_password: 'rpc secret',
      bitcoind_rpc_host: 'localhost',
      bitcoind_rpc_port: 18443,
      indexer_url: '127.0.0.1:50001',
      proxy_endpoint: 'rpc://127.0.0.1:3000/json-rpc',
      announce_addresses: [],
      announce_alias: null,
    };
    expect(await node.call('POST', '/unlock', flat)).toEqual({ status: 200, body: {} });
    expect((await node.call('GET', '/nodeinfo')).body.pubkey).toBe(pubkey);
  });

  it('changes the password while locked', async () => {
    await node.call('POST', '/lock');
    expect((await node.call('POST', '/changepassword', { old_password: 'wrong password', new_password: 'another password' })).status).toBe(401);
    expect(await node.call('POST', '/changepassword', { old_password: PASSWORD, new_password: 'another password' })).toEqual({ status: 200, body: {} });
    expect((await node.call('POST', '/unlock', { password: PASSWORD })).status).toBe(401);
    expect((await node.call('POST', '/unlock', { password: 'another password' })).status).toBe(200);
    expect((await node.call('GET', '/nodeinfo')).body.pubkey).toBe(pubkey);
  });

  it('never writes the password or the mnemonic in clear, to disk or to the log', () => {
    const state = readFileSync(join(storage, 'devnode-state.json'), 'utf8');
    expect(JSON.parse(state)).toMatchObject({ version: 1, initialized: true, passwordHash: expect.any(String) });
    for (const secret of [PASSWORD, 'another password', 'rpc secret', mnemonic, mnemonic.split(' ')[0]!]) {
      expect(state).not.toContain(secret);
      expect(node.stdout()).not.toContain(secret);
    }
    expect(node.stdout()).toMatch(/^\S+Z INFO POST \/unlock 200 [\d.]+ms$/m);
  });

  it('answers /shutdown, then exits with code 0', async () => {
    expect(await node.call('POST', '/shutdown')).toEqual({ status: 200, body: {} });
    expect(await node.exited).toEqual({ code: 0, signal: null });
  });
});

describe('devnode request handling', () => {
  it('uses RLN error bodies for unknown routes and bad bodies', async () => {
    const node = await startNode(tempStorage());
    expect(await node.call('GET', '/no-such-endpoint')).toEqual({
      status: 404, body: { error: 'Not found: /no-such-endpoint', code: 404, name: 'NotFound' },
    });
    const badJson = await node.call('POST', '/init', '{"password": ');
    expect(badJson).toMatchObject({ status: 400, body: { code: 400, name: 'InvalidRequest' } });
    const missing = await node.call('POST', '/unlock', { bitcoind_rpc_host: 'localhost' });
    expect(missing).toMatchObject({ status: 400, body: { code: 400, name: 'InvalidRequest' } });
    expect(missing.body.error).toContain('missing field `password`');
    expect(await stopNode(node)).toEqual({ code: 0, signal: null });
  });
});

describe('devnode start-up failures', () => {
  it('exits with code 2 and a message on bad arguments', async () => {
    const dir = tempStorage();
    const ports = ['--daemon-listening-port', '3001', '--ldk-peer-listening-port', '9735'];
    const cases: Array<[string[], RegExp]> = [
      [[dir, ...ports, '--network', 'regtest'], /--disable-authentication or --root-public-key/],
      [[dir, ...ports, '--network', 'regtest', '--disable-authentication', '--root-public-key', 'ab'.repeat(32)], /not both/],
      [[dir, ...ports, '--network', 'regtest', '--root-public-key', 'xyz'], /64 hex/],
      [[dir, ...ports, '--network', 'moon', '--disable-authentication'], /--network must be one of/],
      [[dir, '--daemon-listening-port', 'abc', '--ldk-peer-listening-port', '9735', '--network', 'regtest', '--disable-authentication'], /port number/],
      [[...ports, '--network', 'regtest', '--disable-authentication'], /storage directory/],
    ];
    const results = await Promise.all(
      cases.map(async ([args]) => {
        const run = spawnDevnode(args);
        return { exit: await run.exited, stderr: run.stderr() };
      }),
    );
    results.forEach(({ exit, stderr }, i) => {
      expect(exit.code).toBe(2);
      expect(stderr).toMatch(cases[i]![1]);
      expect(stderr).toContain('usage: devnode');
    });
  });

  it('syncs its wallet for DEVNODE_SYNC_DELAY_MS before answering /btcbalance, unless told to skip it', async () => {
    const node = await startNode(tempStorage(), { env: { DEVNODE_SYNC_DELAY_MS: '700' } });
    await node.call('POST', '/init', { password: PASSWORD });
    await node.call('POST', '/unlock', { password: PASSWORD });
    const timed = async (body: unknown) => {
      const started = Date.now();
      expect((await node.call('POST', '/btcbalance', body)).status).toBe(200);
      return Date.now() - started;
    };
    expect(await timed({ skip_sync: false })).toBeGreaterThanOrEqual(690);
    expect(await timed({})).toBeGreaterThanOrEqual(690);
    expect(await timed({ skip_sync: true })).toBeLessThan(500);
    expect(await timed({ skip_sync: true })).toBeLessThan(500);
    await stopNode(node);
  });

  it('exits with code 2 on a DEVNODE_SYNC_DELAY_MS that is not a number of milliseconds', async () => {
    const run = spawnDevnode(
      [tempStorage(), '--daemon-listening-port', String(await freePort()), '--ldk-peer-listening-port', String(await freePort()), '--network', 'regtest', '--disable-authentication'],
      { DEVNODE_SYNC_DELAY_MS: '5s' },
    );
    expect(await run.exited).toEqual({ code: 2, signal: null });
    expect(run.stderr()).toContain('DEVNODE_SYNC_DELAY_MS must be a whole number of milliseconds, not "5s"');
  });

  it('exits with code 1 without listening when the version starts with fail-', async () => {
    const port = await freePort();
    const storage = tempStorage();
    const started = Date.now();
    const run = spawnDevnode(
      [storage, '--daemon-listening-port', String(port), '--ldk-peer-listening-port', String(await freePort()), '--network', 'regtest', '--disable-authentication'],
      { DEVNODE_VERSION: 'fail-upgrade-test' },
    );
    expect(await run.exited).toEqual({ code: 1, signal: null });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(run.stdout()).toMatch(/^\S+Z ERROR devnode fail-upgrade-test: /m);
    expect(run.stdout()).not.toContain('started');
  });

  it('exits with code 1 when its port is taken', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      const run = spawnDevnode([tempStorage(), '--daemon-listening-port', String(port), '--ldk-peer-listening-port', String(await freePort()), '--network', 'regtest', '--disable-authentication']);
      expect(await run.exited).toEqual({ code: 1, signal: null });
      expect(run.stdout()).toContain(`Port ${port} is unavailable`);
    } finally {
      holder.close();
    }
  });
});
