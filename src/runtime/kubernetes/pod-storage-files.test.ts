// What needs no cluster: how a write's source is cut into chunks, the checks made before any exec
// (the file name, a running pod), and how an image without the tools is reported. The exec
// protocol itself is tested on the test cluster (test/kubernetes/storage-files.test.ts).
import type { Exec, V1Pod, V1Status } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { chunksOf, parseMeasurement, PodStorageFiles } from './pod-storage-files.ts';

async function* pieces(...sizes: number[]) {
  let byte = 0;
  for (const size of sizes) {
    const piece = Buffer.alloc(size);
    for (let i = 0; i < size; i++) piece[i] = byte++ % 251;
    yield piece;
  }
}

async function collect(source: AsyncIterable<Buffer>) {
  const out: Buffer[] = [];
  for await (const chunk of source) out.push(chunk);
  return out;
}

describe('a write source cut into chunks', () => {
  it('gives chunks of exactly the size, the last one shorter, with every byte in order', async () => {
    const chunks = await collect(chunksOf(pieces(3, 10, 1, 0, 7), 4));
    expect(chunks.map((c) => c.byteLength)).toEqual([4, 4, 4, 4, 4, 1]);
    expect(Buffer.concat(chunks)).toEqual(Buffer.concat(await collect(pieces(3, 10, 1, 0, 7))));
  });

  it('gives one empty chunk for an empty source, and no empty chunk after a full one', async () => {
    expect((await collect(chunksOf(pieces(), 4))).map((c) => c.byteLength)).toEqual([0]);
    expect((await collect(chunksOf(pieces(0, 0), 4))).map((c) => c.byteLength)).toEqual([0]);
    expect((await collect(chunksOf(pieces(8), 4))).map((c) => c.byteLength)).toEqual([4, 4]);
  });

  it('copies: a source that reuses its buffer does not change chunks already given', async () => {
    const shared = Buffer.alloc(2);
    async function* reusing() {
      for (const value of [1, 2, 3]) {
        shared.fill(value);
        yield shared;
      }
    }
    expect((await collect(chunksOf(reusing(), 4))).map((c) => [...c])).toEqual([[1, 1, 2, 2], [3, 3]]);
  });
});

describe('storage files of a pod, before any exec', () => {
  const noExec = {} as Exec; // never reached: every case below fails first
  const pods = new Map<string, V1Pod>();
  const files = new PodStorageFiles({ exec: noExec, namespace: 'rln-nodes', currentPod: (nodeId) => pods.get(nodeId) });
  async function* nothing() {}

  it('places files in the daemon storage directory, and refuses names that are not one plain segment', () => {
    expect(files.daemonPath('n1', 'backup-1.enc')).toBe('/data/storage/backup-1.enc');
    for (const name of ['../x', 'a/b', '.hidden', '', 'x'.repeat(200)]) expect(() => files.daemonPath('n1', name)).toThrow(/not a storage file name/);
  });

  it('keeps client backups beside the storage directory, on the same volume', () => {
    expect(files.clientBackupPath('n1', 'rln-cloud-backup-user-a')).toBe('/data/client-backups/rln-cloud-backup-user-a');
    expect(() => files.clientBackupPath('n1', '../storage/x')).toThrow(/not a storage file name/);
  });

  it('says to start a node whose pod is not running', async () => {
    pods.set('pending', { metadata: { name: 'rln-pending-0' }, status: { phase: 'Pending' } });
    pods.set('leaving', {
      metadata: { name: 'rln-leaving-0', deletionTimestamp: new Date() },
      status: { phase: 'Running', containerStatuses: [{ name: 'rln', state: { running: {} } } as never] },
    });
    for (const nodeId of ['stopped', 'pending', 'leaving']) {
      const notRunning = new RegExp(`node ${nodeId} has no running pod: start it first`);
      await expect(files.read(nodeId, 'b.enc')).rejects.toThrow(notRunning);
      await expect(files.write(nodeId, 'b.enc', nothing())).rejects.toThrow(notRunning);
      await expect(files.remove(nodeId, 'b.enc')).rejects.toThrow(notRunning);
    }
  });
});

describe('storage files of a pod whose image lacks the tools', () => {
  const running: V1Pod = { metadata: { name: 'rln-n1-0' }, status: { phase: 'Running', containerStatuses: [{ name: 'rln', state: { running: {} } } as never] } };
  /** An Exec whose every command ends with `status` at once, as the API server's status channel says it. */
  const execEnding = (status: V1Status) =>
    ({
      exec: async (...args: unknown[]) => {
        const onStatus = args[8] as (s: V1Status) => void;
        setImmediate(() => onStatus(status));
        return { readyState: 1, send: () => {}, pause: () => {}, resume: () => {}, terminate: () => {}, on: () => {} };
      },
    }) as unknown as Exec;
  const filesWith = (status: V1Status) => new PodStorageFiles({ exec: execEnding(status), namespace: 'rln-nodes', currentPod: () => running });
  async function* bytes() {
    yield Buffer.from('backup');
  }

  it('says what the image must provide when it has no /bin/sh', async () => {
    const files = filesWith({
      status: 'Failure',
      reason: 'InternalError',
      message: 'Internal error occurred: error executing command in container: failed to exec in container: OCI runtime exec failed: exec failed: unable to start container process: exec: "/bin/sh": stat /bin/sh: no such file or directory: unknown',
    });
    await expect(files.read('n1', 'b.enc')).rejects.toThrow(/stat \/bin\/sh: no such file.*\(the node image must provide \/bin\/sh, cat, head, wc, mv, rm, mkdir, du and df\)$/);
    await expect(files.remove('n1', 'b.enc')).rejects.toThrow(/the node image must provide/);
  });

  it('says so when the shell finds no such command (exit code 127)', async () => {
    const files = filesWith({ status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '127' }] } });
    await expect(files.write('n1', 'b.enc', bytes())).rejects.toThrow(/could not write b\.enc in pod rln-n1-0: exit code 127 \(the node image must provide/);
  });
});

describe("a measurement's du and df output", () => {
  it('reads KiB used by du, and the size and free space from the last line of POSIX df (GNU and busybox)', () => {
    const gnu = 'du 20540\t/data\nFilesystem     1024-blocks    Used Available Capacity Mounted on\n/dev/sdb           10255636   20560  10218692       1% /data\n';
    expect(parseMeasurement(gnu, 'p')).toEqual({ usedBytes: 20540 * 1024, capacityBytes: 10255636 * 1024, availableBytes: 10218692 * 1024 });
    // A long file system name: df -P keeps one line; fields are read from the end.
    const busybox = 'du 8\t/data\nFilesystem           1024-blocks      Used Available Capacity Mounted on\noverlay with space 100 40 60 40% /data\n';
    expect(parseMeasurement(busybox, 'p')).toEqual({ usedBytes: 8192, capacityBytes: 102400, availableBytes: 61440 });
  });

  it('refuses output without du or df, saying what the image must provide', () => {
    expect(() => parseMeasurement('du \nsh: df: not found\n', 'rln-x-0')).toThrow(/rln-x-0.*du and df/);
  });
});

