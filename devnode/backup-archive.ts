// The archive a backup encrypts: the storage directory as a flat sequence of entries, written and
// read as a stream, so neither side ever holds a whole file in memory.
//
//   entry: kind u8 (1 file, 2 directory) | mode u16 | path length u16 | path | size u64 (files only)
//          | the file's bytes
//   end:   kind u8 (0)
//
// Integers are big-endian; the path is relative to the storage directory, UTF-8, '/'-separated. A
// directory comes before the entries inside it. The end marker tells a complete archive from one
// cut short at an entry boundary.
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CorruptBackupError } from './backup-format.ts';

export const END_OF_ARCHIVE = Buffer.from([0]);

const KIND_FILE = 1;
const KIND_DIRECTORY = 2;
const FIXED_BYTES = 5;
const SIZE_BYTES = 8;

export interface EntryHeader {
  kind: 'file' | 'directory';
  /** Relative, '/'-separated. */
  path: string;
  /** Permission bits. */
  mode: number;
  /** Bytes of a file; 0 for a directory. */
  size: number;
}

export function encodeEntryHeader(entry: EntryHeader): Buffer {
  const path = Buffer.from(entry.path, 'utf8');
  if (path.length > 0xffff) throw new Error(`path too long for a backup: ${entry.path}`);
  const out = Buffer.alloc(FIXED_BYTES + path.length + (entry.kind === 'file' ? SIZE_BYTES : 0));
  out.writeUInt8(entry.kind === 'file' ? KIND_FILE : KIND_DIRECTORY, 0);
  out.writeUInt16BE(entry.mode & 0o777, 1);
  out.writeUInt16BE(path.length, 3);
  path.copy(out, FIXED_BYTES);
  if (entry.kind === 'file') out.writeBigUInt64BE(BigInt(entry.size), FIXED_BYTES + path.length);
  return out;
}

type Parsed = { entry: EntryHeader | 'end'; length: number };

/** The entry header at the start of `bytes`, or undefined when more bytes are needed. */
function parseEntryHeader(bytes: Buffer): Parsed | undefined {
  if (bytes.length < 1) return undefined;
  const kind = bytes.readUInt8(0);
  if (kind === 0) return { entry: 'end', length: 1 };
  if (kind !== KIND_FILE && kind !== KIND_DIRECTORY) throw new CorruptBackupError(`unknown archive entry kind ${kind}`);
  if (bytes.length < FIXED_BYTES) return undefined;
  const pathBytes = bytes.readUInt16BE(3);
  const length = FIXED_BYTES + pathBytes + (kind === KIND_FILE ? SIZE_BYTES : 0);
  if (bytes.length < length) return undefined;
  const path = bytes.toString('utf8', FIXED_BYTES, FIXED_BYTES + pathBytes);
  let size = 0;
  if (kind === KIND_FILE) {
    const big = bytes.readBigUInt64BE(FIXED_BYTES + pathBytes);
    if (big > BigInt(Number.MAX_SAFE_INTEGER)) throw new CorruptBackupError(`impossible size for ${path}`);
    size = Number(big);
  }
  return { entry: { kind: kind === KIND_FILE ? 'file' : 'directory', path, mode: bytes.readUInt16BE(1), size }, length };
}

/**
 * The path's segments, refusing anything that could land outside the extraction directory. The
 * archive is checked only when the GCM tag is, at the very end, so its paths must be distrusted
 * while it is being extracted.
 */
export function safeSegments(path: string): string[] {
  const segments = path.split('/');
  const bad = segments.some((s) => s === '' || s === '.' || s === '..' || s.includes('\\') || s.includes('\0'));
  if (bad) throw new CorruptBackupError(`unsafe path in archive: ${JSON.stringify(path)}`);
  return segments;
}

/** Writes the whole buffer (a file write may be partial). */
export async function writeAll(handle: FileHandle, bytes: Buffer): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
    offset += bytesWritten;
  }
}

/** Unpacks a decrypted archive, chunk by chunk, under `root` (which must exist). */
export class ArchiveExtractor {
  private pending: Buffer = Buffer.alloc(0);
  private file: { handle: FileHandle; remaining: number } | undefined;
  private ended = false;
  files = 0;
  bytes = 0;

  constructor(private readonly root: string) {}

  async push(chunk: Buffer): Promise<void> {
    let data = chunk;
    while (data.length > 0) {
      if (this.ended) throw new CorruptBackupError('data after the end of the archive');
      if (this.file) {
        const take = Math.min(this.file.remaining, data.length);
        await writeAll(this.file.handle, data.subarray(0, take));
        this.file.remaining -= take;
        this.bytes += take;
        data = data.subarray(take);
        if (this.file.remaining === 0) await this.closeFile();
        continue;
      }
      this.pending = this.pending.length === 0 ? data : Buffer.concat([this.pending, data]);
      data = Buffer.alloc(0);
      const parsed = parseEntryHeader(this.pending);
      if (!parsed) return;
      data = this.pending.subarray(parsed.length);
      this.pending = Buffer.alloc(0);
      await this.begin(parsed.entry);
    }
  }

  /** Called once the ciphertext has ended: the archive must have ended exactly there too. */
  finish(): void {
    if (!this.ended || this.file || this.pending.length > 0) throw new CorruptBackupError('the archive ends early');
  }

  /** Closes a file left open by a failure; the caller removes the directory. */
  async abort(): Promise<void> {
    await this.file?.handle.close().catch(() => undefined);
    this.file = undefined;
  }

  private async begin(entry: EntryHeader | 'end'): Promise<void> {
    if (entry === 'end') {
      this.ended = true;
      return;
    }
    const target = join(this.root, ...safeSegments(entry.path));
    try {
      if (entry.kind === 'directory') {
        await mkdir(target, { recursive: true, mode: entry.mode | 0o700 });
        return;
      }
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      // 'wx': a path that appears twice means a damaged archive, never a silent overwrite.
      this.file = { handle: await open(target, 'wx', entry.mode | 0o600), remaining: entry.size };
    } catch (err) {
      if (['EEXIST', 'EISDIR', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '')) {
        throw new CorruptBackupError(`archive path ${JSON.stringify(entry.path)} clashes with another entry`);
      }
      throw err;
    }
    this.files += 1;
    if (entry.size === 0) await this.closeFile();
  }

  private async closeFile(): Promise<void> {
    const { handle } = this.file!;
    this.file = undefined;
    try {
      // The restored wallet must survive a power loss right after restore answers.
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}

/** Makes a rename in `dir` durable; not every file system can sync a directory, which is fine. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => undefined);
  if (!handle) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}
