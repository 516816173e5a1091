// The `process` runtime: each node is a child process of the service with its own storage
// directory, ports and log file. Daemons are children (not detached), so stopping the service
// stops them too; a daemon left behind by a crashed service is found through its pid file at the
// next start and stopped, and the reconcile loop starts it again under supervision.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../logger.ts';
import type { NodeEndpoint, NodePorts, NodeRootKeys, NodeRuntime, NodeSpec, NodeVssUrls, PeerAddress, RuntimeStatus, TakenPorts } from './types.ts';
import { buildDaemonCommand } from './command.ts';
import { daemonEnvironment } from './daemon-env.ts';
import { isProcessAlive } from '../platform/process-alive.ts';
import { RotatingLog, type LogRotation } from '../logs/rotating-log.ts';
import { readLogRange } from '../logs/read-range.ts';
import type { RuntimeLogs } from '../logs/runtime-logs.ts';
import { CURRENT_LOG } from '../logs/log-files.ts';
import { tailLogFile } from '../logs/tail-log.ts';
import { projectPath } from '../platform/paths.ts';
import { LocalStorageFiles } from './local-storage-files.ts';
import { allocatePortPair } from './ports.ts';

const DEVNODE_LAUNCHER = projectPath('bin', 'devnode.mjs');
const STOP_GRACE_MS = 10_000;

interface Daemon {
  child: ChildProcess;
  imageVersion: string;
  exited: Promise<void>;
  stopping: boolean;
}

interface PidFile {
  pid: number;
  imageVersion: string;
}

export interface ProcessRuntimeOptions<Within = unknown> {
  dataDir: string;
  /** The ports other nodes hold (NodeRuntime.assignPorts). */
  takenPorts: TakenPorts<Within>;
  /** Command template for the daemon; unset runs devnode. */
  rlnCommand: string | undefined;
  /** Where each node's REST and peer ports come from (NODE_PORT_RANGE). */
  nodePortRange: { from: number; to: number };
  /**
   * The service's environment as the configuration read it (config.ts: daemonEnvironment), so
   * only the configuration reads process.env; daemon-env.ts picks what a daemon sees of it.
   */
  daemonEnvironment: NodeJS.ProcessEnv;
  log: Logger;
  /** Size and count bounds of each node's log files (LOG_FILE_MAX_BYTES, LOG_FILES_KEPT). */
  logRotation?: LogRotation;
  /** The VSS URLs of nodes with continuous state; absent: such nodes start without --vss-url. */
  vssUrls?: NodeVssUrls;
  /** Each node's Biscuit root key (issue #40); absent (tests of the runtime alone): no node has one. */
  rootKeys?: NodeRootKeys;
}

export class ProcessRuntime<Within = unknown> implements NodeRuntime<Within> {
  /** Only the daemons it started: a repair by start() is a restart, recorded by the reconcile loop. */
  readonly reportsEveryRestart = false;
  private readonly daemons = new Map<string, Daemon>();
  private readonly exitListeners: Array<(nodeId: string, detail: string) => void> = [];
  private readonly nodesDir: string;

  constructor(private readonly opts: ProcessRuntimeOptions<Within>) {
    this.nodesDir = join(opts.dataDir, 'nodes');
    mkdirSync(this.nodesDir, { recursive: true });
  }

  private dir = (nodeId: string) => join(this.nodesDir, nodeId);
  private storageDir = (nodeId: string) => join(this.dir(nodeId), 'storage');
  readonly storageFiles = new LocalStorageFiles(this.storageDir);
  private pidPath = (nodeId: string) => join(this.dir(nodeId), 'daemon.pid');
  /** The current log file; rotated ones sit beside it (see logs/log-files.ts). */
  logPath = (nodeId: string) => join(this.dir(nodeId), CURRENT_LOG);
  /** Each daemon's output is in its rotating log files, read where they are. */
  readonly logs: RuntimeLogs = { kind: 'files', read: (nodeId, range) => readLogRange(this.dir(nodeId), range) };

  /** Stops daemons that a previous, crashed instance of the service left running. */
  async stopOrphans(): Promise<number> {
    let stopped = 0;
    for (const nodeId of await readdir(this.nodesDir).catch(() => [] as string[])) {
      const orphan = this.readPidFile(nodeId);
      if (orphan && !this.daemons.has(nodeId) && isOurDaemon(orphan.pid, this.storageDir(nodeId))) {
        this.opts.log.info({ nodeId, pid: orphan.pid }, 'stopping a daemon left by a previous run');
        await killAndWait(orphan.pid);
        stopped++;
      }
      rmSync(this.pidPath(nodeId), { force: true });
    }
    return stopped;
  }

  async assignPorts(within: Within): Promise<NodePorts | undefined> {
    const pair = await allocatePortPair(this.opts.nodePortRange, await this.opts.takenPorts(within));
    return pair && { restPort: pair[0], peerPort: pair[1] };
  }

  async provision(spec: NodeSpec) {
    mkdirSync(this.storageDir(spec.nodeId), { recursive: true });
    // Before the daemon starts: client backups an older version kept in the storage move beside it.
    await this.storageFiles.prepareClientBackups(spec.nodeId);
  }

  async start(spec: NodeSpec) {
    const current = this.daemons.get(spec.nodeId);
    if (current && current.imageVersion === spec.imageVersion && !current.stopping) return;
    if (current) await this.stop(spec.nodeId);
    await this.provision(spec);
    const vssUrl = spec.continuousState && this.opts.vssUrls ? await this.opts.vssUrls.urlFor(spec.nodeId) : undefined;
    // No daemon of this node runs here now (stopped above, orphans at start-up), and the URL is
    // this service's alone: a fence left by one that crashed or was killed is released.
    if (vssUrl) await this.opts.vssUrls!.releaseFence(spec.nodeId);
    const { command, args } = buildDaemonCommand({
      template: this.opts.rlnCommand,
      devnode: [process.execPath, DEVNODE_LAUNCHER],
      storageDir: this.storageDir(spec.nodeId),
      spec,
      vssUrl,
      rootPublicKey: (await this.opts.rootKeys?.publicKeyFor(spec.nodeId)) ?? null,
    });
    // Output goes through the service (pipes, not a file descriptor) so it can be timestamped and
    // rotated; a daemon orphaned by a crash of the service loses its output until it is restarted.
    const child: ChildProcess = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: daemonEnvironment(this.opts.daemonEnvironment, spec.imageVersion),
    });
    const daemonLog = new RotatingLog(this.dir(spec.nodeId), this.opts.logRotation);
    daemonLog.follow(child.stdout!, 'stdout');
    daemonLog.follow(child.stderr!, 'stderr');
    const daemon: Daemon = {
      child,
      imageVersion: spec.imageVersion,
      stopping: false,
      exited: new Promise((resolve) => {
        child.once('exit', (code, signal) => {
          rmSync(this.pidPath(spec.nodeId), { force: true });
          if (this.daemons.get(spec.nodeId) === daemon) this.daemons.delete(spec.nodeId);
          if (!daemon.stopping) {
            const detail = `daemon exited (${signal ?? `code ${code}`})`;
            for (const listener of this.exitListeners) listener(spec.nodeId, detail);
          }
          resolve();
        });
        child.once('error', (err) => {
          this.opts.log.error({ nodeId: spec.nodeId, err: err.message }, 'daemon could not be spawned');
        });
      }),
    };
    this.daemons.set(spec.nodeId, daemon);
    if (child.pid) {
      const pidFile: PidFile = { pid: child.pid, imageVersion: spec.imageVersion };
      writeFileSync(this.pidPath(spec.nodeId), JSON.stringify(pidFile));
    }
  }

  async stop(nodeId: string) {
    const daemon = this.daemons.get(nodeId);
    if (daemon) {
      daemon.stopping = true;
      daemon.child.kill('SIGTERM');
      // The grace timer is cleared as soon as the daemon is gone: a pending one would hold the
      // service's event loop open, and every Ctrl-C would take the whole grace period to exit.
      let grace: NodeJS.Timeout | undefined;
      const graceOver = new Promise<false>((resolve) => {
        grace = setTimeout(() => resolve(false), STOP_GRACE_MS);
      });
      const killed = await Promise.race([daemon.exited.then(() => true), graceOver]).finally(() => clearTimeout(grace));
      if (!killed) {
        this.opts.log.warn({ nodeId, graceMs: STOP_GRACE_MS }, 'node daemon ignored SIGTERM; killing it');
        daemon.child.kill('SIGKILL');
        await daemon.exited;
      }
      return;
    }
    const orphan = this.readPidFile(nodeId);
    if (orphan && isOurDaemon(orphan.pid, this.storageDir(nodeId))) await killAndWait(orphan.pid);
    rmSync(this.pidPath(nodeId), { force: true });
  }

  async replaceImage(spec: NodeSpec) {
    await this.stop(spec.nodeId);
    await this.start(spec);
  }

  async destroy(nodeId: string) {
    await this.stop(nodeId);
    rmSync(this.dir(nodeId), { recursive: true, force: true });
  }

  async storagePresent(nodeId: string) {
    return existsSync(this.storageDir(nodeId));
  }

  /** stop() returns once the daemon (or one a crashed service left) has exited: then the folder goes. */
  async replaceStorage(spec: NodeSpec) {
    await this.stop(spec.nodeId);
    rmSync(this.storageDir(spec.nodeId), { recursive: true, force: true });
    await this.provision(spec);
  }

  async status(nodeId: string): Promise<RuntimeStatus> {
    const daemon = this.daemons.get(nodeId);
    if (daemon && !daemon.stopping) return { state: 'running', imageVersion: daemon.imageVersion, pid: daemon.child.pid };
    if (!existsSync(this.storageDir(nodeId))) return { state: 'missing' };
    return { state: 'stopped' };
  }

  runsDaemon(nodeId: string): boolean {
    const daemon = this.daemons.get(nodeId);
    return daemon !== undefined && !daemon.stopping;
  }

  runningDaemons(): string[] {
    return [...this.daemons.keys()].filter((nodeId) => this.runsDaemon(nodeId));
  }

  endpoint(spec: NodeSpec): NodeEndpoint {
    return { host: '127.0.0.1', port: spec.restPort ?? 0 };
  }

  /** start() returns with the child spawned: there is nothing more the runtime can wait for. */
  async awaitRunning(_spec: NodeSpec, _timeoutMs: number) {}

  /** The service's public host (null: nodes/present.ts fills it in) and the peer port the node was given. */
  peerAddress(spec: NodeSpec): PeerAddress {
    return { host: null, port: spec.peerPort };
  }

  /** Local processes need nothing synced before the runtime can answer. */
  isReady() {
    return true;
  }

  tailLog(nodeId: string, maxBytes = 2048) {
    return tailLogFile(this.dir(nodeId), maxBytes);
  }

  onUnexpectedExit(listener: (nodeId: string, detail: string) => void) {
    this.exitListeners.push(listener);
  }

  async shutdown() {
    await Promise.all([...this.daemons.keys()].map((id) => this.stop(id)));
  }

  private readPidFile(nodeId: string): PidFile | undefined {
    try {
      return JSON.parse(readFileSync(this.pidPath(nodeId), 'utf8')) as PidFile;
    } catch {
      return undefined;
    }
  }
}

/** A pid is reused by the OS; only treat it as our daemon if its command line names its storage. */
function isOurDaemon(pid: number, storageDir: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(storageDir);
  } catch {
    return false;
  }
}

async function killAndWait(pid: number) {
  const alive = () => isProcessAlive(pid);
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + STOP_GRACE_MS;
  while (alive() && Date.now() < deadline) await sleep(50);
  if (alive()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
    while (alive()) await sleep(20);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
