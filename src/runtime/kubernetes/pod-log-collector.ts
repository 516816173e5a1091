// Collects what each node's pod prints into the same rotated log files the process runtime writes
// (DATA_DIR/nodes/<id>/daemon.log*), so log exports, their time ranges and failed builds' last
// lines work the same on both runtimes. Kubernetes keeps a container's output only while its pod
// exists (and one earlier run after a restart): an upgrade or a stop replaces the pod and its
// output would be gone. Following each pod's log as it is written keeps it, across restarts and
// upgrades, bounded by LOG_FILE_MAX_BYTES x LOG_FILES_KEPT per node like the process runtime.
//
// Each line carries the time the kubelet received it (timestamps=true), so a follow that was cut
// (API server restart, service restart) resumes from the last line written without repeating it,
// and reads the previous container's output first when the container restarted meanwhile.
// One replica collects; several replicas need a shared DATA_DIR/nodes or a lease (docs/KUBERNETES.md, "Logs").
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { createInterface } from 'node:readline';
import { Log, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../../logger.ts';
import { RotatingLog, type LogRotation } from '../../logs/rotating-log.ts';
import { tailLogFile } from '../../logs/tail-log.ts';
import { CONTAINER } from './objects.ts';

export interface PodLogCollectorOptions {
  kc: KubeConfig;
  namespace: string;
  nodesDir: string;
  rotation: LogRotation;
  log: Logger;
  /** The node's pod as the watch sees it now. */
  currentPod: (nodeId: string) => V1Pod | undefined;
}

interface Follow {
  podUid: string;
  restartCount: number;
  abort?: AbortController;
  /** Lines up to this time were written before a resume: skipped until a later one arrives. */
  skipThrough?: number;
}

const RETRY_MS = 1_000;
// The kubelet's line prefix: an RFC 3339 time with up to nanoseconds, then a space.
const TIMESTAMPED = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) (.*)$/;

export class PodLogCollector {
  private readonly follows = new Map<string, Follow>();
  private readonly files = new Map<string, RotatingLog>();
  /** The time of the last line written per node, where a resumed follow picks up. */
  private readonly lastWritten = new Map<string, number>();
  private readonly api: Log;
  private stopped = false;

  constructor(private readonly opts: PodLogCollectorOptions) {
    this.api = new Log(opts.kc);
  }

  dirOf = (nodeId: string) => join(this.opts.nodesDir, nodeId);

  /** Called on every change of a node's pod: follows its container once it has started. */
  observe(nodeId: string, pod: V1Pod) {
    if (this.stopped || this.follows.has(nodeId) || !hasStarted(pod)) return;
    void this.follow(nodeId, pod);
  }

  /** The node is gone: stop following and close its file (the runtime removes the directory). */
  forget(nodeId: string) {
    this.follows.get(nodeId)?.abort?.abort();
    this.follows.delete(nodeId);
    this.files.get(nodeId)?.close();
    this.files.delete(nodeId);
    this.lastWritten.delete(nodeId);
  }

  stop() {
    this.stopped = true;
    for (const nodeId of [...this.follows.keys()]) this.forget(nodeId);
  }

  private async follow(nodeId: string, pod: V1Pod) {
    const follow: Follow = { podUid: pod.metadata!.uid!, restartCount: restartsOf(pod) };
    this.follows.set(nodeId, follow);
    const since = await this.resumePoint(nodeId);
    try {
      await this.stream(nodeId, pod.metadata!.name!, follow, { follow: true, timestamps: true, ...since });
    } catch (err) {
      this.opts.log.debug({ nodeId, err: (err as Error).message.split('\n')[0] }, 'pod log follow failed; retrying');
    }
    setTimeout(() => this.resume(nodeId, follow), RETRY_MS).unref();
  }

  /** After a follow ended: follow the same pod again (catching up a restart), a new pod, or stop. */
  private async resume(nodeId: string, ended: Follow) {
    if (this.stopped || this.follows.get(nodeId) !== ended) return;
    this.follows.delete(nodeId);
    const pod = this.opts.currentPod(nodeId);
    if (!pod || !hasStarted(pod)) return; // observe() starts again when a pod runs
    if (pod.metadata?.uid === ended.podUid && restartsOf(pod) > ended.restartCount) {
      // The container restarted while nobody followed it: what the earlier run printed last.
      const since = await this.resumePoint(nodeId);
      await this.stream(nodeId, pod.metadata!.name!, ended, { previous: true, timestamps: true, ...since }).catch(() => {});
    }
    this.observe(nodeId, pod);
  }

  private async resumePoint(nodeId: string): Promise<{ sinceTime?: string }> {
    if (!this.lastWritten.has(nodeId)) {
      const lastLine = (await tailLogFile(this.dirOf(nodeId), 4096)).trimEnd().split('\n').at(-1) ?? '';
      const at = Date.parse(lastLine.slice(0, 24));
      if (!Number.isNaN(at)) this.lastWritten.set(nodeId, at);
    }
    const last = this.lastWritten.get(nodeId);
    // sinceTime has whole seconds: lines of that second already written are skipped in write().
    return last === undefined ? {} : { sinceTime: new Date(Math.floor(last / 1000) * 1000).toISOString().replace('.000Z', 'Z') };
  }

  private async stream(nodeId: string, podName: string, follow: Follow, options: Record<string, unknown>) {
    const sink = new PassThrough();
    const lines = createInterface({ input: sink, crlfDelay: Infinity });
    const done = new Promise<void>((resolve) => lines.once('close', resolve));
    follow.skipThrough = this.lastWritten.get(nodeId);
    lines.on('line', (line) => this.write(nodeId, follow, line));
    try {
      follow.abort = await this.api.log(this.opts.namespace, podName, CONTAINER, sink, options);
    } catch (err) {
      sink.end();
      throw err;
    }
    await done;
  }

  private write(nodeId: string, follow: Follow, raw: string) {
    const m = TIMESTAMPED.exec(raw);
    // Every line of the container carries its time; one without is the kubelet speaking (e.g.
    // "unable to retrieve container logs for ..." about a container that is gone), not the daemon.
    if (!m) return;
    const at = Date.parse(m[1]!);
    if (follow.skipThrough !== undefined) {
      if (at <= follow.skipThrough) return; // collected before the follow was cut
      follow.skipThrough = undefined;
    }
    let file = this.files.get(nodeId);
    if (!file) {
      file = new RotatingLog(this.dirOf(nodeId), this.opts.rotation);
      this.files.set(nodeId, file);
    }
    // The pod log merges the container's stdout and stderr into one stream.
    file.writeLine(new Date(at), 'stdout', m[2]!);
    this.lastWritten.set(nodeId, at);
  }
}

function hasStarted(pod: V1Pod): boolean {
  const status = pod.status?.containerStatuses?.find((c) => c.name === CONTAINER);
  return Boolean(status?.state?.running || status?.state?.terminated || status?.lastState?.terminated);
}

const restartsOf = (pod: V1Pod) => pod.status?.containerStatuses?.find((c) => c.name === CONTAINER)?.restartCount ?? 0;
