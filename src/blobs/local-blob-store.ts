// The local blob store: objects are files under DATA_DIR/<area>/blobs/<key>, downloaded through
// this service's /downloads route with a signed expiring URL (see signed-url.ts). For one
// machine: replicas on several machines need the s3 store. Each area (log exports, backups) is a
// store of its own, so one area's retention sweep never touches the other's objects.
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rename, rm, stat, writeFile, copyFile, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { open as fsOpen } from 'node:fs/promises';
import { assertValidBlobKey, BlobMissingError, isValidBlobKey, type BlobArea, type BlobStore, type OpenedBlob, type PresignedUrl } from './blob-store.ts';
import { signDownloadUrl, verifyDownloadUrl } from './signed-url.ts';

export class LocalBlobStore implements BlobStore {
  readonly kind = 'local' as const;
  private readonly root: string;
  private readonly secretFile: string;
  private secret: Promise<Buffer> | undefined;
  /** What URLs of this area's objects start with after /downloads/ (exports: nothing, as before areas). */
  readonly urlPrefix: string;

  constructor(private readonly opts: { dataDir: string; publicUrl: string; area?: BlobArea }) {
    const area = opts.area ?? 'exports';
    this.root = join(opts.dataDir, area, 'blobs');
    this.urlPrefix = area === 'exports' ? '' : `${area}/`;
    this.secretFile = join(opts.dataDir, 'download-signing.key');
  }

  private path = (key: string) => join(this.root, ...key.split('/'));

  async putFile(key: string, sourcePath: string) {
    assertValidBlobKey(key);
    const target = this.path(key);
    for (let attempt = 1; ; attempt++) {
      await mkdir(dirname(target), { recursive: true });
      try {
        await rename(sourcePath, target);
        return;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        // The retention sweep may remove an empty directory between mkdir and rename: once more.
        if (code === 'ENOENT' && attempt === 1) continue;
        // Staging on another filesystem than DATA_DIR: copy instead of moving.
        if (code !== 'EXDEV') throw err;
        await copyFile(sourcePath, target);
        await unlink(sourcePath);
        return;
      }
    }
  }

  async presignGet(key: string, opts: { expiresInSeconds: number }): Promise<PresignedUrl> {
    assertValidBlobKey(key);
    const expiresAt = new Date(Date.now() + opts.expiresInSeconds * 1000);
    return { url: signDownloadUrl(this.opts.publicUrl, await this.signingSecret(), this.urlPrefix + key, expiresAt), expiresAt };
  }

  /** The object behind a download URL (its path after /downloads/), or why not. */
  async openSigned(urlKey: string, query: { expires?: unknown; signature?: unknown }): Promise<OpenedBlob | 'forbidden' | 'missing'> {
    if (!urlKey.startsWith(this.urlPrefix) || !verifyDownloadUrl(await this.signingSecret(), urlKey, query)) return 'forbidden';
    const key = urlKey.slice(this.urlPrefix.length);
    try {
      const { size } = await stat(this.path(key));
      return { stream: createReadStream(this.path(key)), bytes: size };
    } catch {
      return 'missing'; // a genuine URL whose export was deleted by retention
    }
  }

  async open(key: string): Promise<Readable> {
    assertValidBlobKey(key);
    const handle = await fsOpen(this.path(key), 'r').catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'ENOENT' ? new BlobMissingError(`no object ${key}`) : err;
    });
    return handle.createReadStream();
  }

  async delete(key: string) {
    assertValidBlobKey(key);
    await rm(this.path(key), { force: true });
  }

  async deletePrefix(prefix: string) {
    let deleted = 0;
    for (const { key } of await this.list()) {
      if (key.startsWith(prefix)) {
        await rm(this.path(key), { force: true });
        deleted++;
      }
    }
    await this.removeEmptyDirs(this.root);
    return deleted;
  }

  async deleteOlderThan(cutoff: Date) {
    let deleted = 0;
    for (const { key, modified } of await this.list()) {
      if (modified < cutoff) {
        await rm(this.path(key), { force: true });
        deleted++;
      }
    }
    await this.removeEmptyDirs(this.root);
    return deleted;
  }

  private async list(dir = this.root, prefix = ''): Promise<Array<{ key: string; modified: Date }>> {
    const out: Array<{ key: string; modified: Date }> = [];
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const key = prefix + entry.name;
      if (entry.isDirectory()) out.push(...(await this.list(join(dir, entry.name), `${key}/`)));
      else if (isValidBlobKey(key)) out.push({ key, modified: (await stat(join(dir, entry.name))).mtime });
    }
    return out;
  }

  private async removeEmptyDirs(dir: string): Promise<boolean> {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => undefined);
    if (!entries) return false;
    let empty = true;
    for (const e of entries) {
      if (!e.isDirectory() || !(await this.removeEmptyDirs(join(dir, e.name)))) empty = false;
    }
    if (empty && dir !== this.root) await rm(dir, { recursive: true, force: true });
    return empty;
  }

  /** 256 random bits made on first use and kept in DATA_DIR (mode 0600), so URLs survive restarts. */
  private signingSecret(): Promise<Buffer> {
    this.secret ??= (async () => {
      try {
        const hex = (await readFile(this.secretFile, 'utf8')).trim();
        if (/^[0-9a-f]{64}$/.test(hex)) return Buffer.from(hex, 'hex');
      } catch {}
      const secret = randomBytes(32);
      await mkdir(dirname(this.secretFile), { recursive: true });
      // 'wx': if two starts race, one writes and the other reads what it wrote.
      try {
        await writeFile(this.secretFile, `${secret.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
        await chmod(this.secretFile, 0o600);
        return secret;
      } catch {
        return Buffer.from((await readFile(this.secretFile, 'utf8')).trim(), 'hex');
      }
    })();
    this.secret.catch(() => (this.secret = undefined));
    return this.secret;
  }
}
