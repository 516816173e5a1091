// The few Kubernetes API calls the runtime makes, over the official client (@kubernetes/client-node):
// server-side apply under one field manager, delete, and the cluster's answers turned into errors a
// user can act on. Watches live in watched-objects.ts.
import { existsSync } from 'node:fs';
import {
  ApiException,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { FIELD_MANAGER } from './objects.ts';
import type { ApiVerb, CountRequest } from './api-requests.ts';

const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** The kubeconfig file when one is given, else the service account of the pod the service runs in. */
export function loadKubeConfig(path: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (path) {
    if (!existsSync(path)) throw new Error(`KUBECONFIG names ${path}, which does not exist`);
    kc.loadFromFile(path);
  } else if (existsSync(IN_CLUSTER_TOKEN)) {
    kc.loadFromCluster();
  } else {
    throw new Error('RUNTIME=kubernetes needs KUBECONFIG (a kubeconfig file) or to run inside a cluster with a service account');
  }
  if (!kc.getCurrentCluster()) throw new Error(`the kubeconfig ${path} has no current cluster`);
  return kc;
}

/** The HTTP status of a failed API call, or undefined when the API server was not reached at all. */
export function statusOf(err: unknown): number | undefined {
  if (err instanceof ApiException) return err.code;
  const code = (err as { statusCode?: unknown; code?: unknown })?.statusCode ?? (err as { code?: unknown })?.code;
  return typeof code === 'number' ? code : undefined;
}

/** What went wrong with an API call, in words an operator can act on. */
export function describeApiError(err: unknown, action: string): Error {
  const status = statusOf(err);
  const body = err instanceof ApiException ? (err.body as { message?: string } | undefined) : undefined;
  const detail = body?.message ?? (err instanceof Error ? err.message.split('\n')[0] : String(err));
  if (status === undefined) return new Error(`the Kubernetes API server could not be reached to ${action}: ${detail}`);
  if (status === 401) return new Error(`the Kubernetes API server refused the service's credentials (401) to ${action}`);
  if (status === 403) return new Error(`the service's Kubernetes role does not allow it to ${action} (403): ${detail}`);
  return new Error(`Kubernetes refused to ${action} (${status}): ${detail}`);
}

/**
 * How long one call keeps retrying while the API server cannot be reached or answers 5xx/429 (a
 * control-plane restart takes seconds): long enough to ride one out, short enough that a build
 * against a cluster that is really gone fails with the reason after its job's own retries.
 */
const RETRY_FOR_MS = 30_000;
const RETRY_MAX_DELAY_MS = 2_000;
/**
 * One request's limit: the client sets none, and a request sent while an API server restarts can
 * wait without end (seen: a reconcile pass stuck on one). A request past it counts as transient.
 */
const REQUEST_TIMEOUT_MS = 10_000;

function withTimeout<T>(request: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)), REQUEST_TIMEOUT_MS);
  });
  return Promise.race([request, timeout]).finally(() => clearTimeout(timer));
}

function isTransient(err: unknown): boolean {
  const status = statusOf(err);
  return status === undefined || status === 429 || status >= 500;
}

export class Cluster {
  private readonly objects: KubernetesObjectApi;
  /**
   * Requests made (applies, deletes, reads), for the benchmark's calls per lifecycle operation. The
   * client's resource discovery, once per kind per process, and the watches are not counted.
   */
  requests = 0;

  /** `count`: told of every request too, by verb (the service's metric), namespace checks included. */
  constructor(readonly kc: KubeConfig, private readonly count: CountRequest = () => {}) {
    this.objects = KubernetesObjectApi.makeApiClient(kc);
  }

  /** Server-side apply: idempotent, and it takes back fields someone edited by hand. */
  async apply<T extends KubernetesObject>(spec: T): Promise<T> {
    try {
      return await this.retrying('patch', async () => (await this.objects.patch(spec, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply)) as T);
    } catch (err) {
      throw describeApiError(err, `apply ${spec.kind} ${spec.metadata?.name}`);
    }
  }

  /** Deletes an object; false when it was already gone. `gracePeriodSeconds` 0 removes a pod at once. */
  async delete(spec: KubernetesObject, gracePeriodSeconds?: number): Promise<boolean> {
    try {
      await this.retrying('delete', () => this.objects.delete(spec, undefined, undefined, gracePeriodSeconds, undefined, 'Background'));
      return true;
    } catch (err) {
      if (statusOf(err) === 404) return false;
      throw describeApiError(err, `delete ${spec.kind} ${spec.metadata?.name}`);
    }
  }

  /** Whether an object exists now (asked of the API server, not of a cache). */
  async exists(spec: KubernetesObject, retry = true): Promise<boolean> {
    const read = () => this.objects.read(spec as KubernetesObject & { metadata: { name: string } });
    try {
      await (retry ? this.retrying('get', read) : this.once('get', read));
      return true;
    } catch (err) {
      if (statusOf(err) === 404) return false;
      throw describeApiError(err, `read ${spec.kind} ${spec.metadata?.name}`);
    }
  }

  /** Runs one request, again while the failure is transient (see RETRY_FOR_MS); counts each try. */
  private async retrying<T>(verb: ApiVerb, request: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + RETRY_FOR_MS;
    for (let delay = 250; ; delay = Math.min(delay * 2, RETRY_MAX_DELAY_MS)) {
      this.requests++;
      this.count(verb);
      try {
        return await withTimeout(request());
      } catch (err) {
        if (!isTransient(err) || Date.now() + delay > deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /** One request, counted only by verb: the start-up's namespace check is no lifecycle step. */
  private once<T>(verb: ApiVerb, request: () => Promise<T>): Promise<T> {
    this.count(verb);
    return request();
  }

  /** Creates the namespace when it is missing; a role without that right is fine if it exists. */
  async ensureNamespace(name: string): Promise<void> {
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
    // Not retried: an API server that is away must not hold up the service's start.
    if (await this.exists(ns, false).catch(() => false)) return;
    try {
      await this.once('create', () => this.objects.create(ns));
    } catch (err) {
      if (statusOf(err) !== 409) throw describeApiError(err, `create the namespace ${name}`);
    }
  }
}
