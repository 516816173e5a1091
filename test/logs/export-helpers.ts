// Shared steps of the log export tests: poll an export to its end, download and decompress its
// parts, and write synthetic daemon output into a node's log directory.
import { closeSync, openSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { rotatedLogName } from '../../src/logs/log-files.ts';
import type { CallResult } from '../helpers/server.ts';

type Call = (path: string, opts?: { token?: string }) => Promise<CallResult>;

export async function waitForExport(call: Call, token: string, nodeId: string, taskId: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await call(`/api/nodes/${nodeId}/logs?taskId=${taskId}`, { token });
    if (r.status !== 202) return r;
    if (r.json?.status !== 'IN_PROGRESS' || r.json.data.length !== 0) throw new Error(`unexpected 202 body ${r.text}`);
    if (Date.now() > deadline) throw new Error(`export ${taskId} still IN_PROGRESS after ${timeoutMs} ms`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** Downloads every URL (no credentials: the URL is the credential) and decompresses each part. */
export async function downloadParts(urls: string[]): Promise<string[]> {
  const parts: string[] = [];
  for (const url of urls) {
    const res = await fetch(url);
    if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${await res.text()}`);
    parts.push(gunzipSync(Buffer.from(await res.arrayBuffer())).toString('utf8'));
  }
  return parts;
}

/**
 * Writes `lines` lines of collected output as rotated file `seq`, timed one second apart from
 * `start`, as the runtime's collector would have (mtime = time of the last line). Returns the text.
 */
export function writeSyntheticLog(nodeDir: string, seq: number, start: Date, lines: number, tag = 'synthetic'): string {
  let seed = seq * 7919;
  const noise = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31).toString(36).slice(2, 10);
  let text = '';
  for (let i = 0; i < lines; i++) {
    text += `${new Date(start.getTime() + i * 1000).toISOString()} stdout ${tag} line ${i} ${noise()} ${noise()} ${noise()}\n`;
  }
  const path = join(nodeDir, rotatedLogName(seq));
  writeFileSync(path, text);
  const last = new Date(start.getTime() + (lines - 1) * 1000);
  utimesSync(path, last, last);
  return text;
}

/** Like writeSyntheticLog for large volumes: written in batches, returns only the byte count. */
export function writeBulkLog(nodeDir: string, seq: number, start: Date, lines: number): number {
  const path = join(nodeDir, rotatedLogName(seq));
  const fd = openSync(path, 'w');
  let bytes = 0;
  try {
    for (let i = 0; i < lines; i += 10_000) {
      let batch = '';
      for (let j = i; j < Math.min(lines, i + 10_000); j++) {
        batch += `${new Date(start.getTime() + j).toISOString()} stdout bulk ${seq} line ${j} peer connected; channel update processed; balance unchanged\n`;
      }
      bytes += writeSync(fd, batch);
    }
  } finally {
    closeSync(fd);
  }
  const last = new Date(start.getTime() + lines);
  utimesSync(path, last, last);
  return bytes;
}
