import { describe, expect, it } from 'vitest';
import { daemonEnvironment } from './daemon-env.ts';

describe('the environment of a node daemon', () => {
  it('holds what a program needs and devnode settings, never the service secrets', () => {
    const env = daemonEnvironment(
      {
        PATH: '/usr/bin',
        HOME: '/home/rln',
        LANG: 'C.UTF-8',
        RUST_LOG: 'info',
        DEVNODE_HOST: '0.0.0.0',
        DEVNODE_VERSION: 'from-the-service',
        DATABASE_URL: 'postgres://app:hunter2@db/rln',
        S3_SECRET_ACCESS_KEY: 'secret',
        REGTEST_BITCOIND_RPC_PASSWORD: 'rpc-secret',
        KUBECONFIG: '/etc/kube/config',
        NODE_OPTIONS: '--require /tmp/x.js',
      },
      'devnode-0.2.0',
    );
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/home/rln', LANG: 'C.UTF-8', RUST_LOG: 'info', DEVNODE_HOST: '0.0.0.0', DEVNODE_VERSION: 'devnode-0.2.0' });
  });
});
