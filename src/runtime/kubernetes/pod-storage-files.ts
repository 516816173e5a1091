// Files in a node's storage on the kubernetes runtime. The storage is a volume mounted in the
// node's pod and nowhere else, so the service reaches it by running small commands in the daemon's
// container through the exec API (pod-command.ts): the node image must provide /bin/sh, cat, head,
// wc, mv, rm, mkdir, du and df (RLN's Debian-based image does). Both ways are streamed, never loaded whole:
//
//   read    `[ -f <path> ] || exit 66; exec cat -- <path>`: stdout goes to the caller as it comes,
//           paused while the caller is behind; 66 (EX_NOINPUT) means the file is not there
//   write   the source in chunks of CHUNK_BYTES, one exec each: `head -c <n> >[>] <path>.partial`
//           with exactly n bytes on stdin; then `wc -c` must count every byte sent before
//           `mv <path>.partial <path>`; on any failure the partial file is removed
//   remove  `rm -f -- <path>`
//   measure `du -sk` and `df -Pk` of the volume's mount: what the node's files take, and the
//           volume's size and free space as its file system reports them (what the kubelet's
//           stats would say, without the nodes/proxy permission reading them takes)
//   prepare `mkdir -p` the client backups folder beside the storage directory, and `mv` into it
//           the client backups an older version kept in the storage directory; once per pod (its uid)
//
// Why chunks of a known length: before Kubernetes 1.30 an exec's stdin cannot be closed without
// losing the exit status (see pod-command.ts), so a command cannot read "until the end": it must be
// told how much to read, and the source's length is not known in advance. So each chunk is one
// exec told its length, which any `head` honours (nothing follows on its stdin). Rejected: staging
// the whole source on the service's disk to learn its length (a second copy of every backup, and
// nothing sent before the source is read to its end); one exec for the whole source with
// length-prefixed frames decoded by a shell loop (right only with a `head` that never reads ahead:
// GNU's does not, busybox's does). The next chunk is read from the source while the current one is
// sent, so a slow source and the transfer overlap. The final size check makes the rename depend on
// every byte having arrived, whatever a dropped connection did.
import { Readable } from 'node:stream';
import type { Exec, V1Pod } from '@kubernetes/client-node';
import { checkedName } from '../local-storage-files.ts';
import { CLIENT_BACKUP_PREFIX, CLIENT_BACKUPS_DIR, StorageFileMissingError, type NodeStorageFiles, type StorageMeasurement } from '../types.ts';
import { CONTAINER, DATA_MOUNT, podName, STORAGE_DIR } from './objects.ts';
import { runInPod, type CommandExit, type PodContainer } from './pod-command.ts';

export interface PodStorageFilesOptions {
  exec: Exec;
  namespace: string;
  /** The node's pod as the watch sees it now. */
  currentPod: (nodeId: string) => V1Pod | undefined;
  /** Bytes per exec of a write (CHUNK_BYTES unless told). */
  chunkBytes?: number;
}

/**
 * Bytes per exec of a write: held in memory twice at most (one being sent, the next being read).
 * Each exec costs a round trip through the API server, the kubelet and the container runtime
 * (~80 ms on the test cluster), so larger chunks are faster: 100 MB went at ~30-45 MB/s in 8 MiB
 * chunks, ~40-55 MB/s in 16 MiB, ~60 MB/s in 32 MiB, against ~100 MB/s for one read. 16 MiB keeps
 * a write at 32 MiB of memory, fine for the few at a time backups and restores make.
 */
export const CHUNK_BYTES = 16 * 2 ** 20;
const MISSING_EXIT_CODE = 66;
/** The caller's stream buffers up to this much before the pod's output is paused. */
const READ_BUFFER_BYTES = 2 ** 20;

const sh = (script: string, ...args: string[]) => ['/bin/sh', '-c', script, 'sh', ...args];
const READ = '[ -f "$1" ] || exit 66; exec cat -- "$1"';
// umask 077: the file is the daemon's alone, as the process runtime writes it (mode 0600).
const WRITE_FIRST = 'umask 077; head -c "$2" > "$1.partial"';
const WRITE_NEXT = 'head -c "$2" >> "$1.partial"';
const COMPLETE =
  'size=$(wc -c < "$1.partial") && [ $size -eq "$2" ] || { echo "$1.partial has ${size:-no} bytes, expected $2" >&2; exit 1; }; mv -f -- "$1.partial" "$1"';
const REMOVE = 'rm -f -- "$1"';
// $1 the storage directory, $2 the client backups folder, $3 the prefix of client backups' names.
const PREPARE =
  'umask 077; mkdir -p -- "$2" || exit 1; for f in "$1/$3"*; do case "$f" in *.partial) ;; *) [ -f "$f" ] && { mv -f -- "$f" "$2/" || exit 1; } ;; esac; done; exit 0';
// du's own errors (a folder it may not read, such as a volume's lost+found) leave its total in place.
const MEASURE = 'echo "du $(du -sk -- "$1" 2>/dev/null)"; df -Pk -- "$1"';
export const CLIENT_BACKUPS_PATH = `${DATA_MOUNT}/${CLIENT_BACKUPS_DIR}`;

export class PodStorageFiles implements NodeStorageFiles {
  /** The uid of each node's pod whose client backups folder is known to be ready. */
  private readonly prepared = new Map<string, string>();

  constructor(private readonly opts: PodStorageFilesOptions) {}

  daemonPath(_nodeId: string, name: string): string {
    return `${STORAGE_DIR}/${checkedName(name)}`;
  }

  async read(nodeId: string, name: string): Promise<Readable> {
    const path = this.daemonPath(nodeId, name);
    const target = this.runningPod(nodeId);
    let started!: () => void;
    const firstBytes = new Promise<void>((resolve) => (started = resolve));
    const out = new Readable({
      highWaterMark: READ_BUFFER_BYTES,
      read: () => command.resume(),
      destroy: (err, done) => {
        command.abort(err ?? new Error(`the reader of ${name} stopped early`));
        done(err);
      },
    });
    const command = runInPod(this.opts.exec, target, sh(READ, path), {
      what: `read ${name}`,
      onStdout: (chunk) => {
        started();
        return out.push(chunk);
      },
    });
    const exit = command.exit.catch((err: Error) => {
      throw withImageHint(err);
    });
    // Waits for the first bytes or the end, so a missing file is this call's error, not the stream's.
    const ended = await Promise.race([firstBytes.then(() => undefined), exit]);
    if (ended && ended.code !== 0) {
      if (ended.code === MISSING_EXIT_CODE) throw new StorageFileMissingError(`node ${nodeId} has no file ${name} in its storage`);
      throw failed(ended, `read ${name} in node ${nodeId}'s pod`);
    }
    exit.then(
      (result) => (result.code === 0 ? out.push(null) : out.destroy(failed(result, `read ${name} in node ${nodeId}'s pod`))),
      (err: Error) => out.destroy(err),
    );
    return out;
  }

  async write(nodeId: string, name: string, source: AsyncIterable<Uint8Array>): Promise<{ bytes: number }> {
    const path = this.daemonPath(nodeId, name);
    const target = this.runningPod(nodeId);
    const chunks = chunksOf(source, this.opts.chunkBytes ?? CHUNK_BYTES);
    let bytes = 0;
    try {
      let next = chunks.next();
      for (let first = true; ; first = false) {
        const { value: chunk, done } = await next;
        if (done) break;
        // Read ahead while this chunk is sent; a failure of the read is met at the next await.
        next = chunks.next();
        next.catch(() => {});
        await this.run(target, `write ${name}`, sh(first ? WRITE_FIRST : WRITE_NEXT, path, String(chunk.byteLength)), chunk);
        bytes += chunk.byteLength;
      }
      await this.run(target, `complete ${name}`, sh(COMPLETE, path, String(bytes)));
    } catch (err) {
      // The source is let go (its own cleanup runs) without waiting on a read that may never end.
      chunks.return(undefined).catch(() => {});
      await this.run(target, `remove ${name}.partial`, sh(REMOVE, `${path}.partial`)).catch(() => {});
      throw err;
    }
    return { bytes };
  }

  async remove(nodeId: string, name: string): Promise<void> {
    const path = this.daemonPath(nodeId, name);
    await this.run(this.runningPod(nodeId), `remove ${name}`, sh(REMOVE, path));
  }

  clientBackupPath(_nodeId: string, name: string): string {
    return `${CLIENT_BACKUPS_PATH}/${checkedName(name)}`;
  }

  async prepareClientBackups(nodeId: string): Promise<void> {
    const target = this.runningPod(nodeId);
    // One exec per pod: the volume outlives the pod, but nothing puts client backups back in the
    // storage directory, and a new pod (a restart, another image) is checked once more.
    const uid = this.opts.currentPod(nodeId)?.metadata?.uid ?? '';
    if (uid !== '' && this.prepared.get(nodeId) === uid) return;
    await this.run(target, 'prepare the client backups folder', sh(PREPARE, STORAGE_DIR, CLIENT_BACKUPS_PATH, CLIENT_BACKUP_PREFIX));
    this.prepared.set(nodeId, uid);
  }

  async measure(nodeId: string): Promise<StorageMeasurement> {
    const target = this.runningPod(nodeId);
    let out = '';
    const exit = await runInPod(this.opts.exec, target, sh(MEASURE, DATA_MOUNT), {
      what: 'measure the storage',
      onStdout: (chunk) => {
        if (out.length < 4096) out += chunk.toString('utf8');
        return true;
      },
    }).exit.catch((err: Error) => {
      throw withImageHint(err);
    });
    if (exit.code !== 0) throw failed(exit, `measure the storage in pod ${target.pod}`);
    return parseMeasurement(out, target.pod);
  }

  /** Runs one command to its end; anything but exit code 0 is an error. */
  private async run(target: PodContainer, what: string, command: string[], stdin?: Uint8Array): Promise<void> {
    const exit = await runInPod(this.opts.exec, target, command, { what, stdin }).exit.catch((err: Error) => {
      throw withImageHint(err);
    });
    if (exit.code !== 0) throw failed(exit, `${what} in pod ${target.pod}`);
  }

  /** The node's pod, when its daemon's container runs: only then is its volume reachable. */
  private runningPod(nodeId: string): PodContainer {
    const pod = this.opts.currentPod(nodeId);
    const running =
      pod?.status?.phase === 'Running' &&
      !pod.metadata?.deletionTimestamp &&
      pod.status.containerStatuses?.some((c) => c.name === CONTAINER && c.state?.running !== undefined);
    if (!running) throw new Error(`node ${nodeId} has no running pod: start it first`);
    return { namespace: this.opts.namespace, pod: podName(nodeId), container: CONTAINER };
  }
}

const IMAGE_NEEDS = 'the node image must provide /bin/sh, cat, head, wc, mv, rm, mkdir, du and df';

function failed(exit: CommandExit, what: string): Error {
  const detail = exit.stderr.trim().split('\n').slice(0, 3).join('; ');
  // 127: the shell found no such command.
  const hint = exit.code === 127 ? ` (${IMAGE_NEEDS})` : '';
  return new Error(`could not ${what}: exit code ${exit.code}${detail ? `: ${detail}` : ''}${hint}`);
}

/** An image without /bin/sh fails the exec itself, in the container runtime's words: says what it lacks. */
function withImageHint(err: Error): Error {
  return /exec: "\/bin\/sh"/.test(err.message) ? new Error(`${err.message} (${IMAGE_NEEDS})`) : err;
}

/** MEASURE's output: `du <KiB used>\t<path>`, then df's POSIX table (its last line: `<fs> <KiB> <used> <available> <use%> <mount>`). */
export function parseMeasurement(out: string, pod: string): StorageMeasurement {
  const lines = out.trim().split('\n');
  const used = /^du (\d+)\s/.exec(lines[0] ?? '')?.[1];
  const fields = (lines.at(-1) ?? '').trim().split(/\s+/);
  const [capacity, available] = [fields.at(-5), fields.at(-3)];
  if (used === undefined || !/^\d+$/.test(capacity ?? '') || !/^\d+$/.test(available ?? '')) {
    throw new Error(`could not measure the storage in pod ${pod}: unexpected du and df output ${JSON.stringify(out.slice(0, 300))} (${IMAGE_NEEDS})`);
  }
  return { usedBytes: Number(used) * 1024, capacityBytes: Number(capacity) * 1024, availableBytes: Number(available) * 1024 };
}

/**
 * The source in chunks of exactly `size` bytes (the last one shorter; one empty chunk for an empty
 * source, so the file is still written). Each chunk is a fresh copy: a source may reuse its buffers.
 */
export async function* chunksOf(source: AsyncIterable<Uint8Array>, size: number): AsyncGenerator<Buffer, void, undefined> {
  let chunk = Buffer.allocUnsafe(size);
  let filled = 0;
  let yielded = false;
  for await (const piece of source) {
    for (let at = 0; at < piece.byteLength; ) {
      const n = Math.min(size - filled, piece.byteLength - at);
      chunk.set(piece.subarray(at, at + n), filled);
      filled += n;
      at += n;
      if (filled === size) {
        yield chunk;
        yielded = true;
        chunk = Buffer.allocUnsafe(size);
        filled = 0;
      }
    }
  }
  if (filled > 0 || !yielded) yield chunk.subarray(0, filled);
}
