// Files in a node's storage on RUNTIME=kubernetes (what backups and restores move), on the
// project's real test cluster: a node started through the runtime itself, its files written and
// read through exec in its pod, byte for byte, complete or not at all, and streamed (a 100 MB
// round trip, whose throughput is printed, not asserted).
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { readKubernetesConfig } from '../../src/runtime/kubernetes/settings.ts';
import { CHUNK_BYTES } from '../../src/runtime/kubernetes/pod-storage-files.ts';
import { KubernetesRuntime } from '../../src/runtime/kubernetes/runtime.ts';
import { StorageFileMissingError, type NodeSpec } from '../../src/runtime/types.ts';
import { deleteNamespace, describeOnCluster, kubectl, testKubeconfig, testNamespace, until, SMALL_NODE_PODS } from '../helpers/kubernetes.ts';

const MB = 2 ** 20;

/** `total` bytes of random data in pieces of `piece` bytes, hashed as they are made. */
function randomSource(total: number, piece: number, failAfter?: number) {
  const hash = createHash('sha256');
  async function* source() {
    for (let sent = 0; sent < total; sent += piece) {
      if (failAfter !== undefined && sent >= failAfter) throw new Error('the source failed midway');
      const bytes = randomBytes(Math.min(piece, total - sent));
      hash.update(bytes);
      yield bytes;
    }
  }
  return { source: source(), sha256: () => hash.digest('hex') };
}

async function sha256Of(stream: Readable): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).byteLength;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** A kubeconfig for a new service account of the namespace, with no rights yet. */
async function limitedKubeconfig(namespace: string, account: string, dir: string): Promise<string> {
  await kubectl(['-n', namespace, 'create', 'serviceaccount', account]);
  const secret = await until('the service account token', async () =>
    (await kubectl(['-n', namespace, 'get', 'serviceaccount', account, '-o', 'jsonpath={.secrets[0].name}'])).trim(),
  );
  const token = Buffer.from((await kubectl(['-n', namespace, 'get', 'secret', secret, '-o', 'jsonpath={.data.token}'])).trim(), 'base64').toString();
  const server = (await kubectl(['config', 'view', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}'])).trim();
  const path = join(dir, `${account}.kubeconfig`);
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${server}", insecure-skip-tls-verify: true}}]
users: [{name: ${account}, user: {token: "${token}"}}]
contexts: [{name: c, context: {cluster: c, user: ${account}, namespace: ${namespace}}}]
current-context: c
`,
  );
  return path;
}

const rate = (bytes: number, ms: number) => `${(bytes / MB / (ms / 1000)).toFixed(1)} MB/s`;

describeOnCluster('storage files of a node on the kubernetes runtime (test cluster)', () => {
  const namespace = testNamespace('files');
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-files-'));
  const spec: NodeSpec = { nodeId: randomBytes(16).toString('hex'), network: 'regtest', imageVersion: 'devnode-0.1.0', restPort: null, peerPort: null };
  const nodeId = spec.nodeId;
  let runtime: KubernetesRuntime;
  const files = () => runtime.storageFiles;
  /** What the daemon's container sees, asked with its own node binary (not through the code under test). */
  const inPod = async (script: string) =>
    JSON.parse(await kubectl(['-n', namespace, 'exec', `rln-${nodeId}-0`, '-c', 'rln', '--', 'node', '-e', `const fs = require('fs'); console.log(JSON.stringify(${script}))`]));
  const storageListing = () => inPod("fs.readdirSync('/data/storage').sort()");

  beforeAll(async () => {
    const problems: string[] = [];
    const config = readKubernetesConfig({ KUBECONFIG: testKubeconfig!, K8S_NAMESPACE: namespace, K8S_STORAGE_SIZE: '512Mi', ...SMALL_NODE_PODS }, problems);
    expect(problems).toEqual([]);
    runtime = await KubernetesRuntime.start({ config, takenPorts: async () => new Set<number>(), defaultPeerHost: '127.0.0.1', log: createLogger('warn') });
    await runtime.start(spec);
    await runtime.awaitRunning(spec, 120_000);
  }, 180_000);
  afterAll(async () => {
    await runtime?.destroy(nodeId).catch(() => {});
    await runtime?.shutdown();
    await deleteNamespace(namespace);
    rmSync(dataDir, { recursive: true, force: true });
  }, 180_000);

  it('writes 5 MB into the daemon storage and reads it back byte for byte', async () => {
    const { source, sha256 } = randomSource(5 * MB, 100_000);
    expect(await files().write(nodeId, 'backup-a.enc', source)).toEqual({ bytes: 5 * MB });
    expect(await sha256Of(await files().read(nodeId, 'backup-a.enc'))).toEqual({ sha256: sha256(), bytes: 5 * MB });

    // The daemon sees it at daemonPath, owned by its user and readable by it alone; nothing else is left.
    const path = files().daemonPath(nodeId, 'backup-a.enc');
    expect(path).toBe('/data/storage/backup-a.enc');
    const stat = await inPod(`(({ size, mode, uid }) => ({ size, mode: (mode & 0o777).toString(8), uid }))(fs.statSync('${path}'))`);
    expect(stat).toEqual({ size: 5 * MB, mode: '600', uid: 1000 });
    expect((await storageListing()).filter((f: string) => f.includes('backup'))).toEqual(['backup-a.enc']);

    // An empty file is a file too.
    expect(await files().write(nodeId, 'empty.enc', randomSource(0, 1).source)).toEqual({ bytes: 0 });
    expect(await sha256Of(await files().read(nodeId, 'empty.enc'))).toMatchObject({ bytes: 0 });
  }, 120_000);

  it('rejects the read of a missing file with StorageFileMissingError', async () => {
    const read = files().read(nodeId, 'never-written.enc');
    await expect(read).rejects.toBeInstanceOf(StorageFileMissingError);
    await expect(read).rejects.toThrow(`node ${nodeId} has no file never-written.enc in its storage`);
  });

  it('writes complete or not at all: a source that fails midway leaves the earlier file, and no partial one', async () => {
    const before = randomSource(1000, 1000);
    await files().write(nodeId, 'backup-b.enc', before.source);
    // Fails once a first chunk has reached the pod, so there is a partial file to remove.
    const failing = randomSource(3 * CHUNK_BYTES, MB, CHUNK_BYTES + 3 * MB);
    await expect(files().write(nodeId, 'backup-b.enc', failing.source)).rejects.toThrow('the source failed midway');
    expect(await sha256Of(await files().read(nodeId, 'backup-b.enc'))).toEqual({ sha256: before.sha256(), bytes: 1000 });
    expect((await storageListing()).filter((f: string) => f.startsWith('backup-b'))).toEqual(['backup-b.enc']);

    // A new name that fails leaves nothing at all.
    await expect(files().write(nodeId, 'backup-c.enc', randomSource(3 * CHUNK_BYTES, MB, CHUNK_BYTES + MB).source)).rejects.toThrow('the source failed midway');
    expect((await storageListing()).filter((f: string) => f.startsWith('backup-c'))).toEqual([]);
    await expect(files().read(nodeId, 'backup-c.enc')).rejects.toBeInstanceOf(StorageFileMissingError);
  }, 120_000);

  it('removes a file, and removing it again is no error', async () => {
    await files().remove(nodeId, 'backup-b.enc');
    await expect(files().read(nodeId, 'backup-b.enc')).rejects.toBeInstanceOf(StorageFileMissingError);
    await files().remove(nodeId, 'backup-b.enc');
    await files().remove(nodeId, 'never-written.enc');
  });

  it('streams 100 MB each way (throughput printed), and a reader may stop early', async () => {
    const total = 100 * MB;
    const { source, sha256 } = randomSource(total, 256 * 1024);
    let t0 = performance.now();
    expect(await files().write(nodeId, 'big.enc', source)).toEqual({ bytes: total });
    const writeMs = performance.now() - t0;
    t0 = performance.now();
    expect(await sha256Of(await files().read(nodeId, 'big.enc'))).toEqual({ sha256: sha256(), bytes: total });
    const readMs = performance.now() - t0;
    console.log(`storage files on the test cluster, 100 MB: write ${rate(total, writeMs)} (${Math.round(writeMs)} ms), read ${rate(total, readMs)} (${Math.round(readMs)} ms)`);

    // A reader that stops after the first bytes ends the exec; the next read is unaffected.
    const early = await files().read(nodeId, 'big.enc');
    for await (const _chunk of early) break;
    expect(early.destroyed).toBe(true);
    expect((await sha256Of(await files().read(nodeId, 'big.enc'))).bytes).toBe(total);
    await files().remove(nodeId, 'big.enc');
  }, 300_000);

  it("needs pods/exec in the service's role, and says so when it is missing", async () => {
    // A service account that may watch the node's objects (what the runtime needs to find its pod) but not exec.
    const kubeconfig = await limitedKubeconfig(namespace, 'files-limited', dataDir);
    await kubectl(['-n', namespace, 'create', 'role', 'files-watch', '--verb=list,watch', '--resource=pods,services,statefulsets.apps']);
    await kubectl(['-n', namespace, 'create', 'rolebinding', 'files-watch', '--role=files-watch', `--serviceaccount=${namespace}:files-limited`]);
    const config = readKubernetesConfig({ KUBECONFIG: kubeconfig, K8S_NAMESPACE: namespace }, []);
    const limited = await KubernetesRuntime.start({ config, takenPorts: async () => new Set<number>(), defaultPeerHost: '127.0.0.1', log: createLogger('silent') });
    try {
      await until('the limited runtime to see the pod', async () => limited.isReady() && (await limited.status(nodeId)).state === 'running');
      await expect(limited.storageFiles.read(nodeId, 'backup-a.enc')).rejects.toThrow(
        `the service's Kubernetes role does not allow it to read backup-a.enc in pod rln-${nodeId}-0 (403)`,
      );
      // The rule deploy/kubernetes/base/rbac.yaml grants.
      await kubectl(['-n', namespace, 'create', 'role', 'files-exec', '--verb=get,create', '--resource=pods/exec']);
      await kubectl(['-n', namespace, 'create', 'rolebinding', 'files-exec', '--role=files-exec', `--serviceaccount=${namespace}:files-limited`]);
      const read = await until('the exec to be allowed', () => limited.storageFiles.read(nodeId, 'backup-a.enc').catch(() => undefined), 30_000);
      expect((await sha256Of(read)).bytes).toBe(5 * MB);
    } finally {
      await limited.shutdown();
    }
  }, 120_000);

  it("moves client backups kept in the storage directory to client-backups beside it, on the node's volume", async () => {
    // What an older version left: a client's backup inside the storage RLN archives.
    expect(await files().write(nodeId, 'rln-cloud-backup-user-old', randomSource(1000, 1000).source)).toEqual({ bytes: 1000 });
    await files().prepareClientBackups(nodeId);
    expect(await storageListing()).not.toContain('rln-cloud-backup-user-old');
    expect(await inPod("fs.readdirSync('/data/client-backups')")).toEqual(['rln-cloud-backup-user-old']);
    expect(await inPod("fs.statSync('/data/client-backups/rln-cloud-backup-user-old').size")).toBe(1000);
    expect(await inPod("(fs.statSync('/data/client-backups').mode & 0o777).toString(8)")).toBe('700');
    expect(files().clientBackupPath(nodeId, 'rln-cloud-backup-user-old')).toBe('/data/client-backups/rln-cloud-backup-user-old');
    // Again: nothing to move, no error.
    await files().prepareClientBackups(nodeId);
  }, 60_000);

  it("measures the node's volume from inside its pod: what its files take, the volume's size and free space", async () => {
    const before = await files().measure(nodeId);
    expect(await files().write(nodeId, 'measured.bin', randomSource(8 * MB, MB).source)).toEqual({ bytes: 8 * MB });
    const after = await files().measure(nodeId);
    expect(after.usedBytes - before.usedBytes).toBeGreaterThanOrEqual(8 * MB);
    expect(after.capacityBytes).toBeGreaterThan(after.usedBytes);
    expect(after.availableBytes).toBeLessThanOrEqual(after.capacityBytes);
    // As the file system reports it to the daemon itself (its own node binary, not du and df).
    const statfs = await inPod("(({ blocks, bsize, bavail }) => ({ capacity: blocks * bsize, available: bavail * bsize }))(fs.statfsSync('/data'))");
    expect(after.capacityBytes).toBe(Math.floor(statfs.capacity / 1024) * 1024);
    expect(Math.abs(after.availableBytes - statfs.available)).toBeLessThan(64 * MB);
    await files().remove(nodeId, 'measured.bin');
  }, 60_000);

  it('says to start a stopped node first', async () => {
    await runtime.stop(nodeId);
    const notRunning = `node ${nodeId} has no running pod: start it first`;
    await expect(files().write(nodeId, 'backup-d.enc', randomSource(10, 10).source)).rejects.toThrow(notRunning);
    await expect(files().read(nodeId, 'backup-a.enc')).rejects.toThrow(notRunning);
    await expect(files().measure(nodeId)).rejects.toThrow(notRunning);
    await expect(files().prepareClientBackups(nodeId)).rejects.toThrow(notRunning);
  }, 120_000);
});
