import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { buildUnlockBody, parseUnlockInput, unlockFormatFor } from './unlock-body.ts';

const chain = loadConfig({}).nodeAccess.chain.regtest;

describe('parseUnlockInput', () => {
  it('accepts the password and the optional announce fields', () => {
    expect(parseUnlockInput('{"password":"pw-123456"}')).toEqual({ password: 'pw-123456' });
    expect(parseUnlockInput({ password: 'p', announce_alias: 'a', announce_addresses: ['h:1'] })).toEqual({ password: 'p', announce_alias: 'a', announce_addresses: ['h:1'] });
  });

  it('names every problem and never echoes the password', () => {
    const secret = 'hunter2-very-secret';
    const cases: Array<[unknown, RegExp]> = [
      [`{"password": "${secret}`, /not valid JSON/],
      [`{"password": ${secret}}`, /not valid JSON/],
      [[secret], /must be an object/],
      [{}, /password is required/],
      [{ password: 5 }, /password must be a string/],
      [{ password: '' }, /must not be empty/],
      [{ password: secret, rgb_magic: 'x' }, /unknown field "rgb_magic"/],
      [{ password: secret, bitcoind_rpc_password: 42 }, /bitcoind_rpc_password must be a string/],
      [{ password: secret, bitcoind_rpc_port: '18443' }, /bitcoind_rpc_port must be a port number/],
      [{ password: secret, bitcoind_rpc_port: 70000 }, /bitcoind_rpc_port must be a port number/],
      [{ password: secret, bitcoind_rpc_host: 'a host' }, /bitcoind_rpc_host must be a non-empty string/],
      [{ password: secret, indexer_url: '' }, /indexer_url must be a non-empty string/],
      [{ password: secret, ldk_chain_sync: { mode: 'Esplora', config: {} } }, /ldk_chain_sync.mode must be BlockSync or TransactionSync/],
      [{ password: secret, ldk_chain_sync: { mode: 'TransactionSync', config: { bitcoind_rpc_host: 'h' } } }, /field "bitcoind_rpc_host" that TransactionSync does not take/],
      [{ password: secret, ldk_chain_sync: { mode: 'BlockSync', config: { bitcoind_rpc_password: secret } }, bitcoind_rpc_host: 'h' }, /not both/],
      [{ password: secret, ldk_chain_sync: 'BlockSync' }, /ldk_chain_sync must be/],
      [{ password: secret, announce_addresses: 'h:1' }, /announce_addresses/],
      [{ password: secret, announce_alias: 7 }, /announce_alias/],
    ];
    for (const [body, message] of cases) {
      let err: any;
      try {
        parseUnlockInput(body);
      } catch (e) {
        err = e;
      }
      expect(err?.message, JSON.stringify(body)).toMatch(message);
      expect(JSON.stringify({ m: err.message, d: err.details })).not.toContain(secret);
    }
  });
});

describe('buildUnlockBody', () => {
  it('current form: ldk_chain_sync with bitcoind (BlockSync) or the indexer (TransactionSync)', () => {
    expect(buildUnlockBody({ password: 'p' }, chain, 'current')).toEqual({
      password: 'p',
      ldk_chain_sync: {
        mode: 'BlockSync',
        config: { bitcoind_rpc_username: 'user', bitcoind_rpc_password: 'password', bitcoind_rpc_host: '127.0.0.1', bitcoind_rpc_port: 18443 },
      },
      indexer_url: 'tcp://127.0.0.1:50001',
      announce_addresses: [],
    });
    expect(buildUnlockBody({ password: 'p', announce_alias: 'x' }, { ...chain, chainSync: 'indexer' }, 'current')).toMatchObject({
      ldk_chain_sync: { mode: 'TransactionSync', config: { indexer_url: 'tcp://127.0.0.1:50001' } },
      announce_alias: 'x',
    });
  });

  it('flat form for older versions', () => {
    expect(buildUnlockBody({ password: 'p', announce_addresses: ['h:9735'] }, chain, 'flat')).toEqual({
      password: 'p',
      bitcoind_rpc_username: 'user',
      bitcoind_rpc_password: 'password',
      bitcoind_rpc_host: '127.0.0.1',
      bitcoind_rpc_port: 18443,
      indexer_url: 'tcp://127.0.0.1:50001',
      proxy_endpoint: 'rpc://127.0.0.1:3000/json-rpc',
      announce_addresses: ['h:9735'],
    });
  });

  it('chooses the form per image version', () => {
    const cfg = { unlockBodyFormat: 'current' as const, unlockFlatVersions: ['abc123'] };
    expect(unlockFormatFor('abc123', cfg)).toBe('flat');
    expect(unlockFormatFor('def456', cfg)).toBe('current');
  });

  it('reads per-network settings from the environment', () => {
    const c = loadConfig({ TESTNET_CHAIN_SYNC: 'indexer', TESTNET_INDEXER_URL: 'ssl://indexer.example:50002', UNLOCK_BODY_FORMAT: 'flat', UNLOCK_FLAT_VERSIONS: 'a, b' }).nodeAccess;
    expect(c.chain.testnet).toMatchObject({ chainSync: 'indexer', indexerUrl: 'ssl://indexer.example:50002', bitcoindRpcPort: 18332 });
    expect(c.unlockBodyFormat).toBe('flat');
    expect(c.unlockFlatVersions).toEqual(['a', 'b']);
    expect(() => loadConfig({ REGTEST_CHAIN_SYNC: 'esplora' })).toThrow(/REGTEST_CHAIN_SYNC/);
    expect(() => loadConfig({ CA_CERT_FILE: '/x' })).toThrow(/CA_CERT_FILE and CA_KEY_FILE must be set together/);
  });

  it("accepts what the original service's clients send: network (normalised, checked) and node_endpoint (dropped)", () => {
    const input = parseUnlockInput({ password: 'pw', announce_addresses: [], announce_alias: 'a', network: 'Regtest', node_endpoint: 'https://nodes.example/u/n' });
    expect(input).toEqual({ password: 'pw', announce_addresses: [], announce_alias: 'a', network: 'regtest' });
    expect(() => parseUnlockInput({ password: 'pw', network: 'mainnet' })).toThrow('network must be regtest or testnet');
    expect(() => parseUnlockInput({ password: 'pw', node_endpoint: 42 })).toThrow(/node_endpoint must be a string/);
    // What RLN's body does not have is still refused.
    expect(() => parseUnlockInput({ password: 'pw', indexer: 'x' })).toThrow(/unknown field "indexer"/);
  });
});

describe("RLN's unlock bodies as clients send them", () => {
  // The wallet that ran its users' nodes on the original service sends the flat form, hosts included.
  const walletBody = {
    password: 'pw-123456',
    bitcoind_rpc_username: 'walletuser',
    bitcoind_rpc_password: 'walletpass',
    bitcoind_rpc_host: 'bitcoind.wallet.example',
    bitcoind_rpc_port: 18444,
    indexer_url: 'electrum.wallet.example:50001',
    proxy_endpoint: 'rpcs://proxy.wallet.example/json-rpc',
    announce_addresses: [],
    announce_alias: null,
  };

  it('flat form in, converted to the current form the node takes: the client settings win', () => {
    expect(buildUnlockBody(parseUnlockInput(walletBody), chain, 'current')).toEqual({
      password: 'pw-123456',
      ldk_chain_sync: {
        mode: 'BlockSync',
        config: { bitcoind_rpc_username: 'walletuser', bitcoind_rpc_password: 'walletpass', bitcoind_rpc_host: 'bitcoind.wallet.example', bitcoind_rpc_port: 18444 },
      },
      indexer_url: 'electrum.wallet.example:50001',
      announce_addresses: [],
    });
  });

  it('flat form in, flat form out: every field as sent', () => {
    expect(buildUnlockBody(parseUnlockInput(walletBody), chain, 'flat')).toEqual({ ...walletBody, announce_alias: undefined, announce_addresses: [] });
  });

  it('current form in: the mode and its config are what the node gets; the operator fills in the rest', () => {
    const input = parseUnlockInput({ password: 'p', ldk_chain_sync: { mode: 'TransactionSync', config: { indexer_url: 'ssl://idx.example:50002' } } });
    expect(input.chain).toEqual({ chainSync: 'indexer', indexerUrl: 'ssl://idx.example:50002' });
    expect(buildUnlockBody(input, chain, 'current')).toEqual({
      password: 'p',
      ldk_chain_sync: { mode: 'TransactionSync', config: { indexer_url: 'ssl://idx.example:50002' } },
      indexer_url: 'ssl://idx.example:50002',
      announce_addresses: [],
    });
    // Converted to the flat form, the client's indexer and the operator's bitcoind and proxy.
    expect(buildUnlockBody(input, chain, 'flat')).toMatchObject({ indexer_url: 'ssl://idx.example:50002', bitcoind_rpc_host: '127.0.0.1', proxy_endpoint: chain.proxyEndpoint });
    const partial = parseUnlockInput({ password: 'p', ldk_chain_sync: { mode: 'BlockSync', config: { bitcoind_rpc_host: 'node.example', bitcoind_rpc_username: 'u', bitcoind_rpc_password: 'x' } } });
    expect(buildUnlockBody(partial, chain, 'current')).toMatchObject({
      ldk_chain_sync: { mode: 'BlockSync', config: { bitcoind_rpc_host: 'node.example', bitcoind_rpc_port: 18443, bitcoind_rpc_username: 'u' } },
    });
  });

  it("never sends the operator's bitcoind credentials to a bitcoind the client names", () => {
    // A client's own host (or port) with the operator's RPC user and password filled in would hand
    // those credentials to whoever listens there (HTTP Basic authentication, in the clear).
    const operator = { ...chain, bitcoindRpcPassword: 'operator-rpc-secret' };
    const leaks: unknown[] = [
      { password: 'p', bitcoind_rpc_host: 'attacker.example' },
      { password: 'p', bitcoind_rpc_port: 8080 },
      { password: 'p', bitcoind_rpc_host: 'attacker.example', bitcoind_rpc_username: 'u' },
      { password: 'p', ldk_chain_sync: { mode: 'BlockSync', config: { bitcoind_rpc_host: 'attacker.example', bitcoind_rpc_port: 80 } } },
    ];
    for (const body of leaks) {
      for (const format of ['current', 'flat'] as const) {
        expect(() => buildUnlockBody(parseUnlockInput(body), operator, format), JSON.stringify(body)).toThrow(/bitcoind_rpc_username and bitcoind_rpc_password/);
      }
    }
    // The operator's own bitcoind keeps the operator's credentials; the client's own pair goes anywhere.
    expect(buildUnlockBody(parseUnlockInput({ password: 'p', bitcoind_rpc_host: operator.bitcoindRpcHost }), operator, 'flat')).toMatchObject({ bitcoind_rpc_password: 'operator-rpc-secret' });
    const own = { password: 'p', bitcoind_rpc_host: 'mine.example', bitcoind_rpc_username: 'u', bitcoind_rpc_password: 'mine' };
    expect(buildUnlockBody(parseUnlockInput(own), operator, 'flat')).toMatchObject({ bitcoind_rpc_host: 'mine.example', bitcoind_rpc_password: 'mine' });
  });

  it("an operator who pins the chain settings sends only theirs", () => {
    expect(buildUnlockBody(parseUnlockInput(walletBody), chain, 'current', 'operator')).toEqual(buildUnlockBody({ password: 'pw-123456', announce_addresses: [] }, chain, 'current'));
    expect(loadConfig({ UNLOCK_CHAIN_SETTINGS: 'operator' }).nodeAccess.unlockChainSettings).toBe('operator');
    expect(loadConfig({}).nodeAccess.unlockChainSettings).toBe('client');
    expect(() => loadConfig({ UNLOCK_CHAIN_SETTINGS: 'both' })).toThrow(/UNLOCK_CHAIN_SETTINGS/);
  });

  it('never echoes the RPC password in a refusal', () => {
    let err: any;
    try {
      parseUnlockInput({ ...walletBody, bitcoind_rpc_password: 'x'.repeat(2000) + 'SECRET', bitcoind_rpc_port: 0 });
    } catch (e) {
      err = e;
    }
    expect(err.message).toMatch(/bitcoind_rpc_password must be a string of at most 1024/);
    expect(JSON.stringify({ m: err.message, d: err.details })).not.toContain('SECRET');
  });
});
