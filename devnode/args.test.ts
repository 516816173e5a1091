import { describe, expect, it } from 'vitest';
import { ArgsError, parseDaemonArgs } from './args.ts';

const base = ['/data/n1', '--daemon-listening-port', '3001', '--ldk-peer-listening-port', '9735', '--network', 'testnet'];

describe('parseDaemonArgs', () => {
  it('reads the rgb-lightning-node command line', () => {
    expect(parseDaemonArgs([...base, '--disable-authentication'])).toEqual({
      storageDir: '/data/n1', daemonPort: 3001, peerPort: 9735, network: 'testnet', rootPublicKey: undefined,
    });
  });

  it('accepts --flag=value and a root public key', () => {
    const key = 'AB'.repeat(32);
    expect(parseDaemonArgs(['/d', '--daemon-listening-port=1', '--ldk-peer-listening-port=2', '--network=signet', `--root-public-key=${key}`]))
      .toMatchObject({ daemonPort: 1, peerPort: 2, network: 'signet', rootPublicKey: key.toLowerCase() });
  });

  it.each([
    [[...base], 'authentication must be chosen'],
    [[...base, '--disable-authentication', '--root-public-key', 'ab'.repeat(32)], 'not both'],
    [[...base, '--disable-authentication', '--disable-authentication'], 'more than once'],
    [[...base, '--disable-authentication', '--verbose'], 'unknown option --verbose'],
    [[...base, '--disable-authentication', 'extra'], 'expected one storage directory'],
    [['/d', '--daemon-listening-port', '70000', '--ldk-peer-listening-port', '1', '--network', 'regtest', '--disable-authentication'], 'between 1 and 65535'],
    [['/d', '--daemon-listening-port', '5', '--ldk-peer-listening-port', '5', '--network', 'regtest', '--disable-authentication'], 'must differ'],
    [['/d', '--daemon-listening-port', '5', '--network', 'regtest', '--disable-authentication'], 'missing --ldk-peer-listening-port'],
    [['/d', '--daemon-listening-port', '5', '--ldk-peer-listening-port', '6', '--network', '--disable-authentication'], '--network needs a value'],
  ])('rejects %j', (argv, message) => {
    expect(() => parseDaemonArgs(argv)).toThrow(ArgsError);
    expect(() => parseDaemonArgs(argv)).toThrow(message);
  });
});
