// Compresses a stream of text into gzip parts of about `partBytes` each. Every part is a complete
// gzip file that decompresses on its own (a user may fetch only the parts they need), parts end
// at line ends, and the parts decompressed in order give back the input exactly; concatenated
// as they are, they also form one valid multi-member gzip file (`cat part-* | gunzip`).
//
// A part is closed at the first line end after its compressed size reached partBytes, so it can
// exceed partBytes by what zlib still buffers plus one line (typically a few KiB).
// Memory stays bounded: input waits for zlib and the disk (backpressure), nothing is collected.
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip, constants, type Gzip } from 'node:zlib';
import { join } from 'node:path';

export interface GzipPartsOptions {
  partBytes: number;
  /** Directory the part files are written to (part-0001.log.gz, ...). */
  dir: string;
  /** Called with each finished part, in order, before the next one starts; may move the file. */
  onPart(part: { index: number; path: string; bytes: number }): Promise<void>;
  /** zlib level: 1 is several times faster than 6 and logs still shrink about ten-fold. */
  level?: number;
}

export interface GzipPartsResult {
  parts: number;
  inputBytes: number;
  outputBytes: number;
}

export const partFileName = (index: number) => `part-${String(index).padStart(4, '0')}.log.gz`;
const NEWLINE = 0x0a;

class Part {
  readonly gzip: Gzip;
  compressedBytes = 0;
  readonly done: Promise<void>;

  constructor(readonly index: number, readonly path: string, level: number) {
    this.gzip = createGzip({ level, chunkSize: 64 * 1024 });
    const counter = new Transform({
      transform: (chunk: Buffer, _enc, cb) => {
        this.compressedBytes += chunk.length;
        cb(null, chunk);
      },
    });
    this.done = pipeline(this.gzip, counter, createWriteStream(path));
    this.done.catch(() => {}); // awaited in finish(); a write error also surfaces through write()
  }

  async write(chunk: Buffer) {
    if (chunk.length > 0 && !this.gzip.write(chunk)) await Promise.race([once(this.gzip, 'drain'), this.done]);
  }

  async finish() {
    this.gzip.end();
    await this.done;
  }
}

export async function writeGzipParts(source: AsyncIterable<Buffer>, opts: GzipPartsOptions): Promise<GzipPartsResult> {
  const level = opts.level ?? constants.Z_BEST_SPEED;
  let index = 0;
  let inputBytes = 0;
  let outputBytes = 0;
  const newPart = () => new Part(++index, join(opts.dir, partFileName(index)), level);
  const closePart = async (part: Part) => {
    await part.finish();
    outputBytes += part.compressedBytes;
    await opts.onPart({ index: part.index, path: part.path, bytes: part.compressedBytes });
  };

  // Opened on the first byte it gets, so input ending exactly at a part boundary leaves no empty part.
  let part: Part | undefined;
  const write = async (bytes: Buffer) => {
    if (bytes.length === 0) return;
    part ??= newPart();
    await part.write(bytes);
  };
  try {
    for await (const chunk of source) {
      inputBytes += chunk.length;
      let rest = chunk;
      // The part is full: finish it at the next line end and carry on in a new one.
      while (part && part.compressedBytes >= opts.partBytes && rest.length > 0) {
        const nl = rest.indexOf(NEWLINE);
        if (nl === -1) break;
        await write(rest.subarray(0, nl + 1));
        rest = rest.subarray(nl + 1);
        await closePart(part);
        part = undefined;
      }
      await write(rest);
    }
    await closePart(part ?? newPart());
  } catch (err) {
    part?.gzip.destroy();
    throw err;
  }
  return { parts: index, inputBytes, outputBytes };
}
