// A node runtime for benchmarks and tests only: nodes are entries in a map and every operation
// takes no time, so what is measured is the control plane's own work (database, jobs, rollouts).
// Health checks still go over a real socket: every healthy node's endpoint is one tiny HTTP server
// that answers like a locked node; versions named `fail-*` point at a closed port and never come up.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NodeEndpoint, NodePorts, NodeRuntime, NodeSpec, PeerAddress, RuntimeStatus } from './types.ts';
import type { RuntimeLogs } from '../logs/runtime-logs.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalStorageFiles } from './local-storage-files.ts';

export class InMemoryRuntimeForTests implements NodeRuntime {
  private readonly nodes = new Map<string, { running: boolean; imageVersion: string }>();
  private server: http.Server | undefined;
  private port = 0;
  /** Operations performed, by kind: what a benchmark reports per upgrade. */
  readonly operations = { start: 0, stop: 0, replaceImage: 0, destroy: 0 };
  /** Real files, in a folder of the temporary directory per node. */
  readonly storageFiles = new LocalStorageFiles((nodeId) => join(tmpdir(), `rln-cloud-in-memory-${process.pid}`, nodeId, 'storage'));

  readonly reportsEveryRestart = false;

  /** Starts the shared health endpoint; call before the first build runs. */
  async listen(): Promise<this> {
    this.server = http.createServer((_req, res) => {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end('{"error":"Node is locked (hint: call unlock)","code":403}');
    });
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** Every node shares the one health endpoint: no ports of its own. */
  async assignPorts(): Promise<NodePorts> {
    return { restPort: null, peerPort: null };
  }

  async provision(spec: NodeSpec) {
    if (!this.nodes.has(spec.nodeId)) this.nodes.set(spec.nodeId, { running: false, imageVersion: spec.imageVersion });
  }

  async start(spec: NodeSpec) {
    this.operations.start++;
    this.nodes.set(spec.nodeId, { running: !spec.imageVersion.startsWith('fail-'), imageVersion: spec.imageVersion });
  }

  async stop(nodeId: string) {
    this.operations.stop++;
    const node = this.nodes.get(nodeId);
    if (node) node.running = false;
  }

  async replaceImage(spec: NodeSpec) {
    this.operations.replaceImage++;
    this.nodes.set(spec.nodeId, { running: !spec.imageVersion.startsWith('fail-'), imageVersion: spec.imageVersion });
  }

  async destroy(nodeId: string) {
    this.operations.destroy++;
    this.nodes.delete(nodeId);
  }

  /** Node ids whose volume a test took away (storagePresent answers false until replaceStorage). */
  readonly lostStorage = new Set<string>();

  async storagePresent(nodeId: string) {
    return !this.lostStorage.has(nodeId);
  }

  async replaceStorage(spec: NodeSpec) {
    await this.stop(spec.nodeId);
    this.lostStorage.delete(spec.nodeId);
  }

  async status(nodeId: string): Promise<RuntimeStatus> {
    const node = this.nodes.get(nodeId);
    if (!node) return { state: 'missing' };
    return node.running ? { state: 'running', imageVersion: node.imageVersion } : { state: 'stopped' };
  }

  runsDaemon(nodeId: string): boolean {
    return this.nodes.get(nodeId)?.running === true;
  }

  runningDaemons(): string[] {
    return [...this.nodes.keys()].filter((nodeId) => this.runsDaemon(nodeId));
  }

  endpoint(spec: NodeSpec): NodeEndpoint {
    // Port 1 (tcpmux) is closed on these machines: a broken version refuses connections at once.
    return { host: '127.0.0.1', port: spec.imageVersion.startsWith('fail-') ? 1 : this.port };
  }

  async awaitRunning() {}

  /** Nobody peers with these nodes: what they were given (the service's host, RLN's port). */
  peerAddress(spec: NodeSpec): PeerAddress {
    return { host: null, port: spec.peerPort };
  }

  isReady() {
    return true;
  }

  async tailLog() {
    return '';
  }

  /** The daemons write nothing. */
  readonly logs: RuntimeLogs = { kind: 'files', read: async function* () {} };

  onUnexpectedExit() {}

  async shutdown() {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
