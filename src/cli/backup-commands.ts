// `rln-cloud backup list|create|download`: a node's backups through the management API.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../errors.ts';
import { callApi, type ApiClientSettings } from './api-client.ts';
import { readPassword } from './read-password.ts';

export type CliArgs = { positional: string[]; options: Record<string, string | true> };

const required = (a: CliArgs, i: number, what: string) => {
  const v = a.positional[i];
  if (!v) throw new AppError('invalid_request', `missing ${what}`);
  return v;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const backupCommands: Record<string, (api: ApiClientSettings, a: CliArgs) => Promise<object>> = {
  'backup list': async (api, a) => {
    const nodeId = required(a, 0, '<node-id>');
    const backups: object[] = [];
    let cursor: string | null = null;
    do {
      const page: { backups: object[]; nextCursor: string | null } = await callApi(api, 'GET', `/api/nodes/${nodeId}/backups${cursor ? `?cursor=${cursor}` : ''}`);
      backups.push(...page.backups);
      cursor = page.nextCursor;
    } while (cursor);
    return { backups };
  },

  /** Starts a backup and, unless --no-wait, waits for it to finish. */
  'backup create': async (api, a) => {
    const nodeId = required(a, 0, '<node-id>');
    const password = await readPassword(a.options, `password of node ${nodeId}: `);
    let backup: any = await callApi(api, 'POST', `/api/nodes/${nodeId}/backups`, { password });
    if (a.options['no-wait']) return backup;
    while (backup.status === 'IN_PROGRESS') {
      await sleep(500);
      backup = await callApi(api, 'GET', `/api/nodes/${nodeId}/backups/${backup.backupId}`);
    }
    if (backup.status === 'FAILED') throw new AppError('invalid_state', `backup ${backup.backupId} failed: ${backup.error?.message ?? 'no reason given'}`);
    const { downloadUrl: _url, expiresAt: _expires, ...record } = backup;
    return record;
  },

  /** Downloads a finished backup to --out (default rln-node-<node>-backup-<id>.rlnbackup), checking its SHA-256. */
  'backup download': async (api, a) => {
    const nodeId = required(a, 0, '<node-id>');
    const backupId = required(a, 1, '<backup-id>');
    const backup: any = await callApi(api, 'GET', `/api/nodes/${nodeId}/backups/${backupId}`);
    if (backup.status !== 'SUCCEEDED' || !backup.downloadUrl) {
      throw new AppError('backup_not_ready', `backup ${backupId} is ${backup.status}: only a finished backup can be downloaded`);
    }
    const out = typeof a.options.out === 'string' ? a.options.out : `rln-node-${nodeId}-backup-${backupId}.rlnbackup`;
    const res = await fetch(backup.downloadUrl);
    if (!res.ok || !res.body) throw new AppError('node_error', `the download answered ${res.status}`);
    const hash = createHash('sha256');
    const partial = `${out}.partial`;
    try {
      await pipeline(
        Readable.fromWeb(res.body as import('node:stream/web').ReadableStream),
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const chunk of chunks) {
            hash.update(chunk);
            yield chunk;
          }
        },
        createWriteStream(partial, { mode: 0o600 }),
      );
      const sha256 = hash.digest('hex');
      if (sha256 !== backup.sha256) throw new AppError('invalid_state', `the downloaded file's SHA-256 is ${sha256}, not the backup's ${backup.sha256}: download it again`);
      await rename(partial, out);
    } finally {
      await rm(partial, { force: true });
    }
    return { file: out, sizeBytes: backup.sizeBytes, sha256: backup.sha256 };
  },
};
