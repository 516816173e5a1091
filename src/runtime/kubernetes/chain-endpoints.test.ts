import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config.ts';
import { isDevnodeImage } from './chain-endpoints.ts';

const RLN = { RUNTIME: 'kubernetes', KUBECONFIG: '/tmp/kc', K8S_IMAGE: 'registry.example.com/rgb-lightning-node:{version}', INITIAL_IMAGE_VERSION: '0123abc' };
const CHAIN = {
  REGTEST_BITCOIND_RPC_HOST: 'bitcoind.chain.svc',
  REGTEST_INDEXER_URL: 'tcp://electrs.chain.svc:50001',
  TESTNET_BITCOIND_RPC_HOST: 'testnet-bitcoind.example.com',
  TESTNET_INDEXER_URL: 'ssl://electrum.example.com:60002',
};

const problemsOf = (env: Record<string, string>) => {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
};

describe('chain endpoints of node pods', () => {
  it('refuses the real daemon on kubernetes with the loopback defaults, naming every variable to set', () => {
    const problems = problemsOf(RLN).join('\n');
    for (const name of ['REGTEST_BITCOIND_RPC_HOST', 'REGTEST_INDEXER_URL', 'TESTNET_BITCOIND_RPC_HOST', 'TESTNET_INDEXER_URL']) expect(problems).toContain(name);
    expect(problems).toMatch(/inside a node's pod is the pod itself/);
    expect(problems).not.toContain('PROXY_ENDPOINT'); // not in the current unlock body
  });

  it('refuses a loopback address set on purpose, and the proxy when flat bodies are sent', () => {
    const problems = problemsOf({ ...RLN, ...CHAIN, TESTNET_INDEXER_URL: 'tcp://localhost:60001', UNLOCK_BODY_FORMAT: 'flat' });
    expect(problems).toHaveLength(2);
    expect(problems.join('\n')).toMatch(/^TESTNET_INDEXER_URL, TESTNET_PROXY_ENDPOINT: /m);
    expect(problems.join('\n')).toMatch(/^REGTEST_PROXY_ENDPOINT: /m);
  });

  it('starts once every endpoint names a host the pods reach', () => {
    expect(problemsOf({ ...RLN, ...CHAIN })).toEqual([]);
    expect(problemsOf({ ...RLN, ...CHAIN, UNLOCK_FLAT_VERSIONS: 'abc123', REGTEST_PROXY_ENDPOINT: 'rpc://proxy.chain.svc:3000/json-rpc', TESTNET_PROXY_ENDPOINT: 'rpcs://proxy.example.com/json-rpc' })).toEqual([]);
  });

  it('refuses a devnode version as the first release of the real image', () => {
    const { INITIAL_IMAGE_VERSION: _, ...withDefault } = RLN;
    expect(problemsOf({ ...withDefault, ...CHAIN })).toEqual([expect.stringMatching(/^INITIAL_IMAGE_VERSION: devnode-0.1.0 .* K8S_IMAGE names registry.example.com\/rgb-lightning-node:\{version\}/)]);
  });

  it('asks nothing of devnode, nor of the process runtime', () => {
    expect(problemsOf({ RUNTIME: 'kubernetes', KUBECONFIG: '/tmp/kc' })).toEqual([]);
    expect(problemsOf({ RUNTIME: 'kubernetes', KUBECONFIG: '/tmp/kc', K8S_IMAGE: 'localhost/devnode:{version}' })).toEqual([]);
    expect(problemsOf({ RLN_COMMAND: '/opt/rln/{version}/rgb-lightning-node' })).toEqual([]);
  });

  it('tells devnode images from others by the repository name', () => {
    expect(isDevnodeImage('localhost/devnode:{version}')).toBe(true);
    expect(isDevnodeImage('registry.example.com/team/devnode:{version}')).toBe(true);
    expect(isDevnodeImage('registry.example.com/rgb-lightning-node:{version}')).toBe(false);
    expect(isDevnodeImage('registry.example.com/devnode-fork/rln:{version}')).toBe(false);
  });
});
