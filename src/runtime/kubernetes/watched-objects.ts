// A watch-backed cache of one kind of object (list, then watch from the list's resourceVersion),
// restarted with backoff whenever the watch fails: the API server restarting, a network cut, RBAC
// refusing, or 410 Gone (the client then lists afresh). Everything the runtime answers about a
// node's state comes from these caches, never from a request per call.
import { KubeConfig, ListWatch, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from '../../logger.ts';
import type { CountRequest } from './api-requests.ts';
import { CountedWatch } from './counted-clients.ts';

export type ChangeKind = 'add' | 'update' | 'delete';

export interface WatchedObjectsOptions<T extends KubernetesObject> {
  kc: KubeConfig;
  namespace: string;
  /** The collection's URL path, e.g. /api/v1/namespaces/<ns>/pods. */
  path: string;
  labelSelector: string;
  list: () => Promise<KubernetesListObject<T>>;
  onChange: (kind: ChangeKind, object: T) => void;
  /** Told of each list and each watch opened (the service's request metric). */
  count?: CountRequest;
  log: Logger;
}

const RESTART_MIN_MS = 500;
const RESTART_MAX_MS = 10_000;

export class WatchedObjects<T extends KubernetesObject> {
  private readonly informer: ListWatch<T>;
  private stopped = false;
  private restartDelay = RESTART_MIN_MS;
  private restartTimer: NodeJS.Timeout | undefined;
  private failed = false;
  /** True once a list succeeded: the cache then holds every object (possibly a little stale). */
  synced = false;
  lastError: string | undefined;

  constructor(private readonly opts: WatchedObjectsOptions<T>) {
    const count = opts.count ?? (() => {});
    const list = () => {
      count('list');
      return opts.list();
    };
    this.informer = new ListWatch<T>(opts.path, new CountedWatch(opts.kc, count), list, false, opts.labelSelector);
    this.informer.on('add', (o) => opts.onChange('add', o));
    this.informer.on('update', (o) => opts.onChange('update', o));
    this.informer.on('delete', (o) => opts.onChange('delete', o));
    this.informer.on('error', (err) => this.restartLater(err));
  }

  async start(): Promise<void> {
    this.stopped = false;
    this.failed = false;
    await this.informer.start();
    if (!this.failed) {
      this.synced = true;
      this.lastError = undefined;
      this.restartDelay = RESTART_MIN_MS;
    }
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.restartTimer);
    void this.informer.stop();
  }

  get(name: string): T | undefined {
    return this.informer.get(name, this.opts.namespace);
  }

  list(): readonly T[] {
    return this.informer.list();
  }

  private restartLater(err: unknown) {
    // A stop aborts the watch's request: that is no failure to report.
    if (this.stopped) return;
    this.failed = true;
    const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
    if (message !== this.lastError) this.opts.log.warn({ path: this.opts.path, err: message }, 'watch failed; restarting');
    this.lastError = message;
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => void this.start(), this.restartDelay);
    this.restartTimer.unref();
    this.restartDelay = Math.min(this.restartDelay * 2, RESTART_MAX_MS);
  }
}
