import { describe, expect, it } from 'vitest';
import { buildDaemonCommand } from './command.ts';

const spec = { nodeId: 'n', network: 'regtest' as const, imageVersion: 'abc123', restPort: 3001, peerPort: 9735 };
const rootPublicKey = 'a1'.repeat(32);
const rlnArgs = ['/data/n/storage', '--daemon-listening-port', '3001', '--ldk-peer-listening-port', '9735', '--network', 'regtest', '--root-public-key', rootPublicKey];

describe('buildDaemonCommand', () => {
  it('runs devnode when no template is configured', () => {
    expect(buildDaemonCommand({ template: undefined, devnode: ['node', 'devnode.mjs'], storageDir: '/data/n/storage', spec, rootPublicKey })).toEqual({
      command: 'node',
      args: ['devnode.mjs', ...rlnArgs],
    });
  });

  it('substitutes {version} in the template and appends RLN arguments', () => {
    expect(buildDaemonCommand({ template: ' /opt/rln/{version}/rgb-lightning-node ', devnode: [], storageDir: '/data/n/storage', spec, rootPublicKey })).toEqual({
      command: '/opt/rln/abc123/rgb-lightning-node',
      args: rlnArgs,
    });
  });

  it('starts a node created before root keys existed without authentication', () => {
    const { args } = buildDaemonCommand({ template: undefined, devnode: ['node', 'devnode.mjs'], storageDir: '/data/n/storage', spec, rootPublicKey: null });
    expect(args.slice(-1)).toEqual(['--disable-authentication']);
    expect(args).not.toContain('--root-public-key');
  });
});
