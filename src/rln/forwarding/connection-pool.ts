// Kept-alive TCP connections to nodes for the forwarding path, per host and port: reused last-in
// first-out, at most MAX_PER_NODE to one node (further requests wait for one), idle ones closed
// after IDLE_MS. Raw sockets read through `onread` into one buffer per connection, so reading an
// answer allocates nothing and goes through no stream machinery (exchange.ts says why).
import net from 'node:net';
import type { RlnEndpoint as NodeEndpoint } from '../failures.ts';

/** Whoever holds a connection for one request. */
export interface ConnectionUser {
  /** The connection is this user's now (it may still be connecting: writes wait for it). */
  leased(connection: NodeConnection): void;
  /** Bytes from the node, `data[start, end)`, valid only during the call. False: stop reading. */
  received(data: Buffer, start: number, end: number): boolean;
  /** The connection closed (the node, an error or a destroy) while this user held it. */
  closed(err: Error | undefined): void;
}

// Idle connections are closed before a node's own keep-alive timeout could close them under a
// request (node:http servers close after 5 s); RLN's server keeps them longer.
const IDLE_MS = 4_000;
// As many idle as in use: a smaller idle pool closes connections after every burst and opens new
// ones for the next (measured: at 50 concurrent requests, 32 idle cost ~2x the CPU per request).
const MAX_PER_NODE = 128;
const READ_BUFFER_BYTES = 64 * 1024;

export class NodeConnection {
  readonly socket: net.Socket;
  user: ConnectionUser | undefined;
  /** It carried a request before: a close before any answer may be the node's idle timeout. */
  reused = false;
  /** Counted among the node's connections in use (leased, or released but not yet closed). */
  inUse = false;
  idleSince = 0;
  private error: Error | undefined;

  constructor(
    readonly pool: NodeConnectionPool,
    readonly key: string,
    endpoint: NodeEndpoint,
  ) {
    this.socket = net.connect({
      host: endpoint.host,
      port: endpoint.port,
      noDelay: true,
      onread: { buffer: Buffer.allocUnsafe(READ_BUFFER_BYTES), callback: (n, buf) => this.onRead(n, buf as Buffer) },
    });
    this.socket.on('error', (err) => (this.error = err));
    this.socket.on('close', () => this.onClose());
  }

  /** Hands the connection back: to a waiting request, to the idle list, or closed. */
  release(reusable: boolean) {
    this.user = undefined;
    if (reusable && !this.socket.destroyed) this.pool.reuse(this);
    else this.destroy();
  }

  destroy(err?: Error) {
    this.socket.destroy(err);
  }

  private onRead(n: number, buf: Buffer): boolean {
    if (this.user) return this.user.received(buf, 0, n);
    // An idle connection that speaks: nothing may be read as the answer to a later request.
    this.destroy();
    return false;
  }

  private onClose() {
    this.pool.forget(this);
    const user = this.user;
    this.user = undefined;
    user?.closed(this.error);
  }
}

export class NodeConnectionPool {
  private readonly idle = new Map<string, NodeConnection[]>();
  private readonly busy = new Map<string, number>();
  private readonly waiting = new Map<string, ConnectionUser[]>();
  private readonly sweeper: NodeJS.Timeout;

  /** `maxPerNode`: connections to one node at most (MAX_PER_NODE; tests set fewer). */
  constructor(private readonly maxPerNode = MAX_PER_NODE) {
    this.sweeper = setInterval(() => this.closeIdle(Date.now()), 1_000);
    this.sweeper.unref();
  }

  /** Gives `user` a connection to `endpoint` now, or once one is free. */
  lease(endpoint: NodeEndpoint, user: ConnectionUser) {
    const key = `${endpoint.host}:${endpoint.port}`;
    const idle = this.idle.get(key);
    let connection = idle?.pop();
    // One the node has just closed (its close event not yet handled) is no use.
    while (connection?.socket.destroyed) connection = idle!.pop();
    if (!connection) {
      if ((this.busy.get(key) ?? 0) >= this.maxPerNode) {
        const queue = this.waiting.get(key);
        if (queue) queue.push(user);
        else this.waiting.set(key, [user]);
        return;
      }
      connection = new NodeConnection(this, key, endpoint);
    }
    this.hand(connection, user);
  }

  /** A request left the queue (its client went away). */
  withdraw(endpoint: NodeEndpoint, user: ConnectionUser) {
    const queue = this.waiting.get(`${endpoint.host}:${endpoint.port}`);
    const at = queue?.indexOf(user) ?? -1;
    if (at !== -1) queue!.splice(at, 1);
  }

  reuse(connection: NodeConnection) {
    connection.reused = true;
    const next = this.waiting.get(connection.key)?.shift();
    if (next) {
      connection.user = next;
      next.leased(connection);
      return;
    }
    this.uncount(connection);
    connection.idleSince = Date.now();
    const idle = this.idle.get(connection.key);
    if (idle) idle.push(connection);
    else this.idle.set(connection.key, [connection]);
  }

  /** The connection closed: it is neither idle nor busy any more; a waiting request may open one. */
  forget(connection: NodeConnection) {
    const idle = this.idle.get(connection.key);
    const at = idle?.indexOf(connection) ?? -1;
    if (at !== -1) idle!.splice(at, 1);
    if (!connection.inUse) return;
    this.uncount(connection);
    const next = this.waiting.get(connection.key)?.shift();
    if (next) {
      const [host, port] = splitKey(connection.key);
      this.lease({ host, port }, next);
    }
  }

  private hand(connection: NodeConnection, user: ConnectionUser) {
    connection.inUse = true;
    connection.user = user;
    this.busy.set(connection.key, (this.busy.get(connection.key) ?? 0) + 1);
    user.leased(connection);
  }

  private uncount(connection: NodeConnection) {
    connection.inUse = false;
    this.busy.set(connection.key, this.busy.get(connection.key)! - 1);
  }

  close() {
    clearInterval(this.sweeper);
    for (const list of this.idle.values()) for (const c of [...list]) c.destroy();
    this.idle.clear();
  }

  private closeIdle(now: number) {
    for (const [key, list] of this.idle) {
      // Oldest first (the list is used last-in first-out): stop at the first one still fresh.
      let stale = 0;
      while (stale < list.length && now - list[stale]!.idleSince >= IDLE_MS) stale++;
      for (const c of list.splice(0, stale)) c.destroy();
      if (list.length === 0) this.idle.delete(key);
    }
  }
}

function splitKey(key: string): [string, number] {
  const at = key.lastIndexOf(':');
  return [key.slice(0, at), Number(key.slice(at + 1))];
}
