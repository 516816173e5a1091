// A VSS client over HTTP (LDK's protocol, docs/VSS.md of the service): the four operations, each a
// POST of a protobuf body to `<vss url>/<operation>` signed with the node's key.
import type { VssIdentity } from './key.ts';
import { VSS_CONFLICT, VSS_NO_SUCH_KEY, vssType } from './messages.ts';

export interface StoredKey {
  key: string;
  version: number;
}

/** A VSS answer that is not a success: the server's error code and message, or a transport failure. */
export class VssRequestError extends Error {
  constructor(
    message: string,
    /** The ErrorResponse code (1 conflict, 4 no such key, 5 auth...); undefined when none came back. */
    readonly code: number | undefined,
  ) {
    super(message);
  }

  get conflict(): boolean {
    return this.code === VSS_CONFLICT;
  }
}

// A VSS server that does not answer must not hold a request (and the node's caller) forever.
const REQUEST_TIMEOUT_MS = 15_000;
const PAGE_SIZE = 100;

export class VssClient {
  constructor(
    private readonly url: string,
    private readonly identity: VssIdentity,
    readonly storeId: string = identity.pubkey,
  ) {}

  /** The key's value and version; undefined when the store has no such key. */
  async get(key: string): Promise<{ version: number; value: Buffer } | undefined> {
    try {
      const answer = await this.call('getObject', 'GetObjectRequest', 'GetObjectResponse', { storeId: this.storeId, key });
      const kv = answer.value as { version: number; value: Buffer } | undefined;
      return kv ? { version: kv.version, value: Buffer.from(kv.value ?? []) } : undefined;
    } catch (err) {
      if (err instanceof VssRequestError && err.code === VSS_NO_SUCH_KEY) return undefined;
      throw err;
    }
  }

  /** One putObjects: every item written or none (a conflict); version -1 writes unconditionally, 0 creates. */
  async put(items: Array<{ key: string; version: number; value: Buffer }>): Promise<void> {
    await this.call('putObjects', 'PutObjectRequest', 'PutObjectResponse', { storeId: this.storeId, transactionItems: items });
  }

  async delete(key: string, version: number): Promise<void> {
    await this.call('deleteObject', 'DeleteObjectRequest', 'DeleteObjectResponse', { storeId: this.storeId, keyValue: { key, version } });
  }

  /** Every key of the store with its version, all pages. */
  async listAll(): Promise<StoredKey[]> {
    const keys: StoredKey[] = [];
    let pageToken: string | undefined;
    for (;;) {
      const answer = await this.call('listKeyVersions', 'ListKeyVersionsRequest', 'ListKeyVersionsResponse', {
        storeId: this.storeId,
        pageSize: PAGE_SIZE,
        ...(pageToken ? { pageToken } : {}),
      });
      const page = (answer.keyVersions ?? []) as StoredKey[];
      keys.push(...page.map((k) => ({ key: k.key, version: k.version })));
      pageToken = answer.nextPageToken as string | undefined;
      if (!pageToken || page.length === 0) return keys;
    }
  }

  private async call(operation: string, requestType: string, answerType: string, message: object): Promise<Record<string, unknown>> {
    const type = vssType(requestType);
    let res: Response;
    try {
      res = await fetch(`${this.url}/${operation}`, {
        method: 'POST',
        headers: { authorization: this.identity.token(), 'content-type': 'application/octet-stream' },
        body: Buffer.from(type.encode(type.fromObject(message)).finish()),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      throw new VssRequestError(`VSS ${operation} failed: ${(err as Error).message}`, undefined);
    }
    const raw = new Uint8Array(await res.arrayBuffer());
    if (res.status !== 200) {
      let code: number | undefined;
      let text = `HTTP ${res.status}`;
      try {
        const error = vssType('ErrorResponse').toObject(vssType('ErrorResponse').decode(raw), { enums: Number, defaults: true });
        code = error.errorCode as number;
        text = `${text}: ${String(error.message)}`;
      } catch {
        // Not an ErrorResponse (a proxy's page, a plain 400): the status says enough.
      }
      throw new VssRequestError(`VSS ${operation} refused (${text})`, code);
    }
    const out = vssType(answerType);
    return out.toObject(out.decode(raw), { longs: Number, bytes: Buffer, defaults: false });
  }
}
