// A watch-backed cache of one kind of object (list, then watch from the list's resourceVersion),
// restarted with backoff whenever the watch fails: the API server restarting, a network cut, RBAC
// refusing, or 410 Gone (the client then lists afresh). Everything the runtime answers about a
// node's state comes from these caches, never from a request per call.
//
// What a fleet at rest costs (docs/BENCHMARKS.md, "The kubernetes runtime at 2,000 nodes"): the
// cache holds every object, so each is kept without its managedFields (~40% of a StatefulSet,
// read by nobody here); and the watches ask for bookmarks, so one the API server ends after its
// request timeout (every 30-60 min) reopens from a recent resourceVersion instead of one too old
// for the server's watch cache, which answers 410 Gone and costs a relist of the whole namespace.
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
    const list = async () => {
      count('list');
      const listed = await opts.list();
      for (const item of listed.items) withoutManagedFields(item);
      return listed;
    };
    this.informer = new ListWatch<T>(opts.path, new CacheWatch(opts.kc, count), list, false, opts.labelSelector);
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

/** The watch a cache is filled from: counted, with bookmarks, its objects without managedFields. */
class CacheWatch extends CountedWatch {
  override watch(...[path, query, callback, done]: Parameters<CountedWatch['watch']>): ReturnType<CountedWatch['watch']> {
    return super.watch(path, { ...query, allowWatchBookmarks: true }, (phase, object, raw) => callback(phase, withoutManagedFields(object), raw), done);
  }
}

function withoutManagedFields<T>(object: T): T {
  const metadata = (object as KubernetesObject | undefined)?.metadata;
  if (metadata) delete metadata.managedFields;
  return object;
}
