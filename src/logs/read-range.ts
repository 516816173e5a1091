// Reads a node's collected daemon output for a time range, as a stream of byte chunks, without
// ever holding more than one chunk per file in memory. Lines carry the time they were received
// (see rotating-log.ts) and files are in time order, so:
//   - a file last modified before `from` holds nothing in range and is skipped unread;
//   - a file whose first line is at or after `to` ends the read;
//   - a file entirely inside the range is copied as raw bytes (the fast path for whole exports);
//   - only files straddling a boundary are split into lines and filtered.
// The set of files and the current file's length are fixed when the read starts: output the
// daemon writes meanwhile, or a rotation, cannot make the read skip or repeat lines.
import { open, type FileHandle } from 'node:fs/promises';
import { listLogFiles } from './log-files.ts';

export interface LogRange {
  /** Inclusive. */
  from?: Date;
  /** Exclusive. */
  to?: Date;
}

const CHUNK_BYTES = 256 * 1024;
const TIMESTAMP_BYTES = 24; // 2026-01-02T03:04:05.678Z
const NEWLINE = 0x0a;

interface OpenFile {
  fh: FileHandle;
  size: number;
  modified: Buffer;
}

export async function* readLogRange(dir: string, range: LogRange = {}): AsyncGenerator<Buffer, void, undefined> {
  const from = range.from ? iso(range.from) : undefined;
  const to = range.to ? iso(range.to) : undefined;
  const files: OpenFile[] = [];
  try {
    for (const path of listLogFiles(dir)) {
      try {
        const fh = await open(path, 'r');
        const st = await fh.stat();
        files.push({ fh, size: st.size, modified: iso(st.mtime) });
      } catch {
        // Deleted by retention since the listing, or the node has no current file yet.
      }
    }
    for (const file of files) {
      if (file.size === 0) continue;
      if (from && file.modified.compare(from) < 0) continue;
      const first = await firstTimestamp(file.fh);
      if (to && first && first.compare(to) >= 0) break;
      const startsInRange = !from || (first !== undefined && first.compare(from) >= 0);
      const endsInRange = !to || file.modified.compare(to) < 0;
      if (startsInRange && endsInRange) {
        yield* readChunks(file.fh, file.size);
      } else if (yield* filterLines(readChunks(file.fh, file.size), from, to)) {
        break;
      }
    }
  } finally {
    await Promise.all(files.map((f) => f.fh.close().catch(() => {})));
  }
}

export const iso = (d: Date) => Buffer.from(d.toISOString(), 'latin1');

function isTimestamp(line: Buffer) {
  return line.length >= TIMESTAMP_BYTES && line[4] === 0x2d && line[10] === 0x54 && line[TIMESTAMP_BYTES - 1] === 0x5a;
}

async function firstTimestamp(fh: FileHandle): Promise<Buffer | undefined> {
  const buf = Buffer.alloc(TIMESTAMP_BYTES);
  const { bytesRead } = await fh.read(buf, 0, TIMESTAMP_BYTES, 0);
  return bytesRead === TIMESTAMP_BYTES && isTimestamp(buf) ? buf : undefined;
}

async function* readChunks(fh: FileHandle, size: number): AsyncGenerator<Buffer, void, undefined> {
  for (let position = 0; position < size; ) {
    // A fresh buffer each time: the consumer (gzip) may still hold the previous one.
    const buf = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, size - position));
    const { bytesRead } = await fh.read(buf, 0, buf.length, position);
    if (bytesRead === 0) return; // truncated under us
    position += bytesRead;
    yield bytesRead === buf.length ? buf : buf.subarray(0, bytesRead);
  }
}

/** Yields the lines in [from, to); returns true once a line at or after `to` was seen. */
export async function* filterLines(chunks: AsyncGenerator<Buffer>, from: Buffer | undefined, to: Buffer | undefined): AsyncGenerator<Buffer, boolean, undefined> {
  let carry: Buffer | undefined;
  // A line without a timestamp of its own (not written by the collector) goes with the line before.
  let keep = !from;
  for await (const chunk of chunks) {
    const data = carry ? Buffer.concat([carry, chunk]) : chunk;
    const kept: Buffer[] = [];
    let start = 0;
    for (let nl = data.indexOf(NEWLINE); nl !== -1; nl = data.indexOf(NEWLINE, start)) {
      const line = data.subarray(start, nl + 1);
      if (isTimestamp(line)) {
        const ts = line.subarray(0, TIMESTAMP_BYTES);
        if (to && ts.compare(to) >= 0) {
          if (kept.length > 0) yield Buffer.concat(kept);
          await chunks.return(undefined);
          return true;
        }
        keep = !from || ts.compare(from) >= 0;
      }
      if (keep) kept.push(line);
      start = nl + 1;
    }
    carry = start < data.length ? data.subarray(start) : undefined;
    if (kept.length > 0) yield Buffer.concat(kept);
  }
  if (carry) {
    // The last line of the file without its newline (the daemon was writing it).
    if (isTimestamp(carry)) {
      const ts = carry.subarray(0, TIMESTAMP_BYTES);
      if (to && ts.compare(to) >= 0) return true;
      keep = !from || ts.compare(from) >= 0;
    }
    if (keep) yield carry;
  }
  return false;
}
