// The process runtime with a real devnode: stopping a daemon leaves nothing behind that would keep
// the service's event loop alive (a forgotten grace timer made every Ctrl-C take 10 s), and the
// daemon sees none of the service's secrets.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.ts';
import { ProcessRuntime } from './process.ts';
import { freePort } from '../../test/helpers/ports.ts';

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('the process runtime', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-process-runtime-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('stops a daemon without leaving a timer running, and hands it no secret', async () => {
    const runtime = new ProcessRuntime({ dataDir, takenPorts: async () => new Set<number>(), rlnCommand: undefined, nodePortRange: { from: 0, to: -1 }, daemonEnvironment: process.env, log: createLogger('silent') });
    const before = timers();
    process.env.DATABASE_URL_FOR_THIS_TEST = 'postgres://app:hunter2@db/rln';
    const spec = { nodeId: 'a'.repeat(32), network: 'regtest' as const, imageVersion: 'devnode-0.1.0', restPort: await freePort(), peerPort: await freePort() };
    try {
      await runtime.start(spec);
      const pid = (await runtime.status(spec.nodeId)).pid!;
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      expect(environ).toContain('DEVNODE_VERSION=devnode-0.1.0');
      expect(environ.filter((e) => e.startsWith('DATABASE_URL'))).toEqual([]);
      await runtime.stop(spec.nodeId);
    } finally {
      delete process.env.DATABASE_URL_FOR_THIS_TEST;
      await runtime.shutdown();
    }
    expect(timers()).toBeLessThanOrEqual(before);
  }, 30_000);

  it('reads the taken ports with the query it was built with, inside what assignPorts is given, and always says where peers reach a node', async () => {
    const asked: string[] = [];
    // assignPorts probes that a port is really free: the range lies below the kernel's ephemeral
    // ports (32768-60999 here), which an outgoing connection of any other test could be holding.
    const runtime = new ProcessRuntime<string>({
      dataDir,
      takenPorts: async (within) => (asked.push(within), new Set([29170, 29171])),
      rlnCommand: undefined,
      nodePortRange: { from: 29170, to: 29173 },
      daemonEnvironment: process.env,
      log: createLogger('silent'),
    });
    expect(await runtime.assignPorts('the create transaction')).toEqual({ restPort: 29172, peerPort: 29173 });
    expect(asked).toEqual(['the create transaction']);
    const spec = { nodeId: 'b'.repeat(32), network: 'regtest' as const, imageVersion: 'devnode-0.1.0', restPort: 29172, peerPort: 29173 };
    expect(runtime.peerAddress(spec)).toEqual({ host: null, port: 29173 });
    expect(runtime.logs.kind).toBe('files');
  });
});
