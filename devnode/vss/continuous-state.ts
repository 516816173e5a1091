// Continuous node state, as RLN's fork does it with --vss-url (the service's docs/VSS.md and
// ../shared/VSS.md): every write of the node's state goes to the local store and then to VSS
// (putObjects, version -1), and the request that caused it is answered only once VSS has it. One
// writer per store: the fence key __rln_instance__, created with version 0 at unlock, holds this
// process's instance id; a copy that finds another id there refuses to unlock. A node whose local
// state is missing (no manager key) is restored from VSS at unlock.
import { randomUUID } from 'node:crypto';
import { RlnError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { LocalNodeStore, MANAGER_KEY } from '../node-store.ts';
import { VssClient, VssRequestError } from './client.ts';
import { vssIdentityFromMnemonic } from './key.ts';

export const FENCE_KEY = '__rln_instance__';
/** RLN's fork checks it still holds the fence every 100 writes; so does devnode. */
export const FENCE_CHECK_EVERY = 100;

export interface VssSettings {
  /** The store's URL (the service's `/vss/<node>/<credential>`), without a trailing slash. */
  url: string;
}

export interface VssBackupInfo {
  backup_exists: boolean;
  server_version: number | null;
  backup_required: boolean;
  pending_kv_writes: number;
}

export class NodeState {
  /** This process's id in the fence; a restarted devnode is another instance. */
  readonly instanceId = randomUUID();
  private client: VssClient | undefined;
  /** Written locally, not yet by VSS (its put failed): sent again before the next write. */
  private readonly pending = new Map<string, Buffer>();
  private writes = 0;
  /** Writes run one after the other, so the last value written locally is the last VSS gets. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly local: LocalNodeStore,
    private readonly vss: VssSettings | undefined,
    private readonly log: Logger,
  ) {}

  get continuous(): boolean {
    return this.vss !== undefined;
  }

  /**
   * At unlock, with the mnemonic: takes the fence and restores the local state from VSS when it
   * has none. Answers the manager's value (undefined for a new node). Refuses (VssFenced) when
   * another instance holds the fence.
   */
  async open(mnemonic: string): Promise<Buffer | undefined> {
    if (this.vss) {
      const client = this.clientFor(mnemonic);
      await this.takeFence(client);
      try {
        if (this.local.read(MANAGER_KEY) === undefined) await this.restore(client, mnemonic);
      } catch (err) {
        await this.releaseFence(client);
        throw err;
      }
      this.client = client;
      this.writes = 0;
    }
    return this.local.read(MANAGER_KEY);
  }

  /** Writes a key locally and, with continuous state, to VSS before answering (in call order). */
  write(key: string, value: Buffer): Promise<void> {
    const run = this.queue.then(() => this.writeNow(key, value));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** At lock and at a clean stop: frees the fence for the next instance. */
  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await this.queue;
    if (client) await this.releaseFence(client);
  }

  /** RLN's GET /vssbackupinfo. */
  async backupInfo(): Promise<VssBackupInfo> {
    const client = this.requireClient();
    const keys = await this.remote(() => client.listAll());
    const manager = keys.find((k) => k.key === MANAGER_KEY);
    return {
      backup_exists: keys.some((k) => k.key !== FENCE_KEY),
      server_version: manager?.version ?? null,
      backup_required: this.pending.size > 0,
      pending_kv_writes: this.pending.size,
    };
  }

  /** RLN's POST /vssclearfence: after a crash left the fence held, frees it (the node is locked). */
  async clearFence(mnemonic: string): Promise<boolean> {
    if (!this.vss) throw new RlnError('VssNotConfigured');
    const client = this.clientFor(mnemonic);
    const fence = await this.remote(() => client.get(FENCE_KEY));
    if (!fence) return false;
    await this.remote(() => client.delete(FENCE_KEY, fence.version));
    this.log.warn(`VSS fence cleared (it was held by instance ${fence.value.toString('utf8')})`);
    return true;
  }

  private async writeNow(key: string, value: Buffer): Promise<void> {
    this.local.write(key, value);
    const client = this.client;
    if (!client) return;
    this.pending.set(key, value);
    if (++this.writes % FENCE_CHECK_EVERY === 0) await this.checkFence(client);
    const identity = this.identity!;
    const items = [...this.pending].map(([k, v]) => ({ key: k, version: -1, value: identity.seal(v) }));
    await this.remote(() => client.put(items));
    this.pending.clear();
  }

  private identity: ReturnType<typeof vssIdentityFromMnemonic> | undefined;

  private clientFor(mnemonic: string): VssClient {
    this.identity = vssIdentityFromMnemonic(mnemonic);
    return new VssClient(this.vss!.url, this.identity);
  }

  private requireClient(): VssClient {
    if (!this.vss) throw new RlnError('VssNotConfigured');
    if (!this.client) throw new RlnError('LockedNode');
    return this.client;
  }

  private async takeFence(client: VssClient): Promise<void> {
    const mine = Buffer.from(this.instanceId, 'utf8');
    let fence = await this.remote(() => client.get(FENCE_KEY));
    if (!fence) {
      try {
        await client.put([{ key: FENCE_KEY, version: 0, value: mine }]);
        this.log.info(`VSS fence taken by instance ${this.instanceId}`);
        return;
      } catch (err) {
        // Another copy created it between our read and our write: it holds the fence.
        if (!(err instanceof VssRequestError && err.conflict)) throw unavailable(err);
        fence = await this.remote(() => client.get(FENCE_KEY));
      }
    }
    if (fence && !fence.value.equals(mine)) {
      this.log.error(`unlock refused: VSS fence held by instance ${fence.value.toString('utf8')}`);
      throw new RlnError('VssFenced', fence.value.toString('utf8'));
    }
  }

  private async checkFence(client: VssClient): Promise<void> {
    const fence = await this.remote(() => client.get(FENCE_KEY));
    if (!fence || fence.value.toString('utf8') !== this.instanceId) {
      this.client = undefined;
      this.log.error('VSS fence lost: another instance writes this store; this one stops writing');
      throw new RlnError('VssFenced', fence ? fence.value.toString('utf8') : 'nobody (cleared)');
    }
  }

  private async releaseFence(client: VssClient): Promise<void> {
    try {
      const fence = await client.get(FENCE_KEY);
      if (fence && fence.value.toString('utf8') === this.instanceId) await client.delete(FENCE_KEY, fence.version);
    } catch (err) {
      this.log.warn(`VSS fence not released: ${(err as Error).message}`);
    }
  }

  private async restore(client: VssClient, mnemonic: string): Promise<void> {
    const identity = vssIdentityFromMnemonic(mnemonic);
    // The manager last: its presence is what says "local state present", so a restore cut short
    // is done again at the next unlock rather than leaving a manager without the rest.
    const keys = (await this.remote(() => client.listAll()))
      .filter((k) => k.key !== FENCE_KEY)
      .sort((a, b) => Number(a.key === MANAGER_KEY) - Number(b.key === MANAGER_KEY));
    for (const { key } of keys) {
      const stored = await this.remote(() => client.get(key));
      if (stored) this.local.write(key, identity.open(stored.value));
    }
    this.log.info(keys.length > 0 ? `local node state missing: restored ${keys.length} keys from VSS` : 'local node state missing and VSS holds none: a new node');
  }

  private async remote<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      throw unavailable(err);
    }
  }
}

function unavailable(err: unknown): RlnError {
  return err instanceof RlnError ? err : new RlnError('VssUnavailable', err instanceof Error ? err.message : String(err));
}
