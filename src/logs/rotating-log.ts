// Collects a daemon's stdout and stderr into its log directory. Each line is prefixed with the
// time the service received it and the stream's name (`<ISO time> stdout <line>`), whatever the
// daemon prints: that timestamp is what time-range exports select on, so they work for any daemon
// binary. The current file is rotated when it reaches maxFileBytes and only the newest maxFiles
// rotated files are kept, so a chatty node cannot fill the disk.
//
// Writes are synchronous: they keep memory bounded (no queue grows behind a slow disk) and keep
// lines of both streams in arrival order. A failure to write (the node was destroyed and its
// directory removed) drops output rather than ever crashing the service.
import { closeSync, fstatSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { currentLogPath, listRotatedLogs, rotatedLogName } from './log-files.ts';
import { join } from 'node:path';

export interface LogRotation {
  maxFileBytes: number;
  maxFiles: number;
}

export const DEFAULT_LOG_ROTATION: LogRotation = { maxFileBytes: 10 * 2 ** 20, maxFiles: 5 };

// A daemon printing without newlines must not make the service buffer without limit.
const MAX_LINE_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

export class RotatingLog {
  private fd: number | undefined;
  private size = 0;
  private openStreams = 0;
  private readonly partial = new Map<string, Buffer[]>();
  private broken = false;

  constructor(
    private readonly dir: string,
    private readonly rotation: LogRotation = DEFAULT_LOG_ROTATION,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Appends the stream's lines until it ends; the file is closed when every followed stream has. */
  follow(stream: Readable, name: string) {
    this.openStreams++;
    stream.on('data', (chunk: Buffer) => this.write(name, chunk));
    stream.once('close', () => {
      this.flushPartial(name);
      if (--this.openStreams === 0) this.close();
    });
  }

  /** Appends output of one stream; complete lines are written at once, a partial line waits. */
  write(stream: string, chunk: Buffer) {
    const pending = this.partial.get(stream) ?? [];
    const prefix = this.prefix(stream); // every line of one chunk arrived at the same moment
    let start = 0;
    const out: Buffer[] = [];
    for (let nl = chunk.indexOf(NEWLINE, start); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
      out.push(prefix, ...pending.splice(0), chunk.subarray(start, nl + 1));
      start = nl + 1;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
    const pendingBytes = pending.reduce((n, b) => n + b.length, 0);
    if (pendingBytes >= MAX_LINE_BYTES) out.push(prefix, ...pending.splice(0), Buffer.from('\n'));
    this.partial.set(stream, pending);
    if (out.length > 0) this.append(Buffer.concat(out));
  }

  /** Appends one whole line with the time it was written, for collectors that know it (pod logs). */
  writeLine(at: Date, stream: string, line: string) {
    this.append(Buffer.from(`${at.toISOString()} ${stream} ${line.slice(0, MAX_LINE_BYTES)}\n`));
  }

  /** Writes what is left of a stream's last line (a daemon that died mid-line). */
  flushPartial(stream: string) {
    const pending = this.partial.get(stream);
    if (pending && pending.length > 0) this.append(Buffer.concat([this.prefix(stream), ...pending, Buffer.from('\n')]));
    this.partial.delete(stream);
  }

  close() {
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch {}
      this.fd = undefined;
    }
  }

  private prefix(stream: string) {
    return Buffer.from(`${this.now().toISOString()} ${stream} `);
  }

  private append(data: Buffer) {
    if (this.broken) return;
    try {
      if (this.fd === undefined) this.open();
      let written = 0;
      while (written < data.length) written += writeSync(this.fd!, data, written);
      this.size += data.length;
      if (this.size >= this.rotation.maxFileBytes) this.rotate();
    } catch {
      // The directory is gone (node destroyed) or the disk failed: drop output, keep the service.
      this.broken = true;
      this.close();
    }
  }

  private open() {
    mkdirSync(this.dir, { recursive: true });
    this.fd = openSync(currentLogPath(this.dir), 'a');
    this.size = fstatSync(this.fd).size;
  }

  private rotate() {
    const current = currentLogPath(this.dir);
    const mine = fstatSync(this.fd!).ino;
    this.close();
    // Another writer (a daemon of the same node still draining after a restart) may have rotated
    // already: then our file has a rotated name and the current one is theirs to keep.
    if (statSync(current, { throwIfNoEntry: false })?.ino === mine) {
      const rotated = listRotatedLogs(this.dir);
      const next = (rotated.at(-1)?.seq ?? 0) + 1;
      renameSync(current, join(this.dir, rotatedLogName(next)));
      rotated.push({ seq: next, path: '' });
      for (const old of rotated.slice(0, Math.max(0, rotated.length - this.rotation.maxFiles))) rmSync(old.path, { force: true });
    }
    this.open();
  }
}
