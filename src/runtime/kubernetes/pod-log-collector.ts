// Follows the pod logs of the nodes this replica holds the log claim of (logs/node-log-collection.ts
// decides which, and stores what comes out): Kubernetes keeps a container's output only while its
// pod exists (and one earlier run after a restart), so an upgrade or a stop would lose it unless it
// is read as it is written. One stream per followed node, none for the others: the streams open
// to the API server grow with the nodes, not with replicas x nodes.
//
// Each line carries the time the kubelet received it (timestamps=true). A follow resumes after the
// last line handed on (`through`): asked from that whole second (sinceTime has no fraction), lines
// at or before it are dropped (logs/line-time.ts). When the container restarted meanwhile, what
// the previous run printed after that point is read first.
import { PassThrough } from 'node:stream';
import { createInterface } from 'node:readline';
import { Log, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../../logger.ts';
import { isNewLine, parseTimedLine, resumeSinceTime, type TimedLine } from '../../logs/line-time.ts';
import type { NodeLogFollower } from '../../logs/node-log-follower.ts';
import { CONTAINER } from './objects.ts';
import type { CountRequest } from './api-requests.ts';

export interface PodLogCollectorOptions {
  kc: KubeConfig;
  namespace: string;
  log: Logger;
  /** The node's pod as the watch sees it now. */
  currentPod: (nodeId: string) => V1Pod | undefined;
  /** Told of each log request (a `get` of pods/log) and of each stream opened (+1) and ended (-1). */
  count?: CountRequest;
  onStreams?: (delta: 1 | -1) => void;
}

interface Wanted {
  onLine: (line: TimedLine) => void;
  /** The kubelet's time of the last line handed on (nine fraction digits). */
  through: string | null;
  /** A first follow after the claim was taken reads the previous container's output too. */
  fresh: boolean;
}

interface Follow {
  podUid: string;
  restartCount: number;
  abort?: AbortController;
}

const RETRY_MS = 1_000;

export class PodLogCollector implements NodeLogFollower {
  private readonly wanted = new Map<string, Wanted>();
  private readonly follows = new Map<string, Follow>();
  private readonly api: Log;
  private stopped = false;
  /** Log streams the API server holds open for this replica now (a previous run's read included). */
  private open = 0;

  constructor(private readonly opts: PodLogCollectorOptions) {
    this.api = new Log(opts.kc);
  }

  /** Starts following the node's pod log after `through`, handing each new line to `onLine`. */
  follow(nodeId: string, through: string | null, onLine: (line: TimedLine) => void) {
    this.unfollow(nodeId);
    this.wanted.set(nodeId, { onLine, through, fresh: true });
    const pod = this.opts.currentPod(nodeId);
    if (pod) this.observe(nodeId, pod);
  }

  /** Stops following the node (its claim went elsewhere, or the node is gone). */
  unfollow(nodeId: string) {
    this.wanted.delete(nodeId);
    this.follows.get(nodeId)?.abort?.abort();
    this.follows.delete(nodeId);
  }

  following(): number {
    return this.follows.size;
  }

  /** Streams open now: fewer than following() while a follow waits to resume (a pod starting, a retry). */
  openStreams(): number {
    return this.open;
  }

  /** Called on every change of a node's pod: follows its container once it has started, if wanted here. */
  observe(nodeId: string, pod: V1Pod) {
    if (this.stopped || !this.wanted.has(nodeId) || this.follows.has(nodeId) || !hasStarted(pod)) return;
    void this.run(nodeId, pod);
  }

  stop() {
    this.stopped = true;
    for (const nodeId of [...this.wanted.keys()]) this.unfollow(nodeId);
  }

  private async run(nodeId: string, pod: V1Pod) {
    const wanted = this.wanted.get(nodeId)!;
    const follow: Follow = { podUid: pod.metadata!.uid!, restartCount: restartsOf(pod) };
    this.follows.set(nodeId, follow);
    try {
      if (wanted.fresh) {
        wanted.fresh = false;
        // Taken over (or first seen) with a container that ran before: its last run's output first.
        if (restartsOf(pod) > 0) await this.stream(nodeId, pod.metadata!.name!, follow, { previous: true }).catch(() => {});
      }
      if (this.follows.get(nodeId) === follow) await this.stream(nodeId, pod.metadata!.name!, follow, { follow: true });
    } catch (err) {
      this.opts.log.debug({ nodeId, err: (err as Error).message.split('\n')[0] }, 'pod log follow failed; retrying');
    }
    setTimeout(() => void this.resume(nodeId, follow), RETRY_MS).unref();
  }

  /** After a follow ended: follow the same pod again (catching up a restart), a new pod, or stop. */
  private async resume(nodeId: string, ended: Follow) {
    if (this.stopped || this.follows.get(nodeId) !== ended) return;
    this.follows.delete(nodeId);
    const pod = this.opts.currentPod(nodeId);
    if (!pod || !hasStarted(pod)) return; // observe() starts again when a pod runs
    if (pod.metadata?.uid === ended.podUid && restartsOf(pod) > ended.restartCount) {
      // The container restarted while nobody followed it: what the earlier run printed last.
      await this.stream(nodeId, pod.metadata!.name!, ended, { previous: true }).catch(() => {});
    }
    this.observe(nodeId, pod);
  }

  private async stream(nodeId: string, podName: string, follow: Follow, options: { follow?: boolean; previous?: boolean }) {
    const wanted = this.wanted.get(nodeId);
    if (!wanted) return;
    const sink = new PassThrough();
    const lines = createInterface({ input: sink, crlfDelay: Infinity });
    const done = new Promise<void>((resolve) => lines.once('close', resolve));
    // The client pipes the response into `sink`, and a pipe ends its destination only when the
    // source ends: an aborted follow (unfollow) makes the source emit an error, a connection cut
    // (an API server restarting) destroys it, and either would leave this follow waiting for
    // ever, counted open and never resumed. Both end the sink here.
    sink.once('pipe', (source: NodeJS.ReadableStream) => {
      const end = () => {
        if (!sink.writableEnded) sink.end();
      };
      source.on('error', end); // kept: an error without a listener would be thrown
      source.once('close', end);
    });
    lines.on('line', (raw) => {
      // A line without the kubelet's time is the kubelet speaking ("unable to retrieve container
      // logs for ..."), not the daemon. The pod log merges the container's stdout and stderr.
      const line = parseTimedLine(raw);
      if (!line || this.wanted.get(nodeId) !== wanted || !isNewLine(line.time, wanted.through)) return;
      wanted.through = line.time;
      wanted.onLine(line);
    });
    const since = resumeSinceTime(wanted.through);
    this.opts.count?.('get');
    try {
      follow.abort = await this.api.log(this.opts.namespace, podName, CONTAINER, sink, { ...options, timestamps: true, ...(since ? { sinceTime: since } : {}) });
    } catch (err) {
      sink.end();
      throw err;
    }
    this.streamsChanged(1);
    try {
      await done;
    } finally {
      this.streamsChanged(-1);
    }
  }

  private streamsChanged(delta: 1 | -1) {
    this.open += delta;
    this.opts.onStreams?.(delta);
  }
}

function hasStarted(pod: V1Pod): boolean {
  const status = pod.status?.containerStatuses?.find((c) => c.name === CONTAINER);
  return Boolean(status?.state?.running || status?.state?.terminated || status?.lastState?.terminated);
}

const restartsOf = (pod: V1Pod) => pod.status?.containerStatuses?.find((c) => c.name === CONTAINER)?.restartCount ?? 0;
