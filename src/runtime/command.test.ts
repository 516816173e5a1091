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

  it('adds RLN fork\'s VSS flags for a node with continuous state: --vss-allow-http only for plain http off loopback', () => {
    const vss = (vssUrl: string) => buildDaemonCommand({ template: undefined, devnode: ['node', 'devnode.mjs'], storageDir: '/data/n/storage', spec, rootPublicKey, vssUrl }).args.slice(1 + rlnArgs.length);
    expect(vss('https://cloud.example/vss/n/c')).toEqual(['--vss-url', 'https://cloud.example/vss/n/c']);
    expect(vss('http://127.0.0.1:3000/vss/n/c')).toEqual(['--vss-url', 'http://127.0.0.1:3000/vss/n/c']);
    expect(vss('http://rln-cloud.rln-cloud.svc:8080/vss/n/c')).toEqual(['--vss-url', 'http://rln-cloud.rln-cloud.svc:8080/vss/n/c', '--vss-allow-http']);
    expect(buildDaemonCommand({ template: undefined, devnode: ['node', 'devnode.mjs'], storageDir: '/data/n/storage', spec, rootPublicKey }).args).not.toContain('--vss-url');
  });

  it('starts a node created before root keys existed without authentication', () => {
    const { args } = buildDaemonCommand({ template: undefined, devnode: ['node', 'devnode.mjs'], storageDir: '/data/n/storage', spec, rootPublicKey: null });
    expect(args.slice(-1)).toEqual(['--disable-authentication']);
    expect(args).not.toContain('--root-public-key');
  });
});
