// A small Server-Sent Events client for the tests: one connection of its own (no agent), messages
// parsed as the EventSource specification says (fields per line, a blank line ends a message,
// lines starting with ":" are comments), and a way to wait for the next one.
import { request, type IncomingMessage } from 'node:http';

export interface SseMessage {
  id: string | undefined;
  event: string | undefined;
  data: string;
}

export interface SseOpenOptions {
  token?: string;
  headers?: Record<string, string>;
}

export class SseClient {
  readonly messages: SseMessage[] = [];
  comments = 0;
  retryMs: number | undefined;
  /** Resolves once the server ended or cut the connection. */
  readonly ended: Promise<void>;
  private read = 0;
  private pending = '';
  private waiters: Array<() => void> = [];
  private done = false;

  private constructor(readonly res: IncomingMessage) {
    res.setEncoding('utf8');
    this.ended = new Promise((resolve) => {
      const finish = () => {
        this.done = true;
        this.notify();
        resolve();
      };
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
    });
    res.on('data', (chunk: string) => this.parse(chunk));
  }

  get status() {
    return this.res.statusCode ?? 0;
  }

  get isDone() {
    return this.done;
  }

  /**
   * Opens the stream; resolves with the client once the answer's headers arrived. A refusal
   * (not 200) resolves too: read `status` and `json()`.
   */
  static open(base: string, path: string, opts: SseOpenOptions = {}): Promise<SseClient> {
    const headers: Record<string, string> = { accept: 'text/event-stream', ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    return new Promise((resolve, reject) => {
      const req = request(`${base}${path}`, { headers, agent: false }, (res) => resolve(new SseClient(res)));
      req.on('error', reject);
      req.end();
    });
  }

  /** The body of a refusal, parsed. */
  async json(): Promise<any> {
    await this.ended;
    return JSON.parse(this.pending);
  }

  /** The next message not yet taken, waiting up to `timeoutMs`. */
  async next(timeoutMs = 10_000): Promise<SseMessage> {
    const deadline = Date.now() + timeoutMs;
    while (this.read >= this.messages.length) {
      if (this.done) throw new Error(`the stream ended after ${this.messages.length} messages`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no message within ${timeoutMs} ms (had ${this.messages.length})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.messages[this.read++]!;
  }

  /** The next `n` messages. */
  async take(n: number, timeoutMs = 10_000): Promise<SseMessage[]> {
    const out: SseMessage[] = [];
    for (let i = 0; i < n; i++) out.push(await this.next(timeoutMs));
    return out;
  }

  /** Messages received but not taken yet. */
  unread(): SseMessage[] {
    return this.messages.slice(this.read);
  }

  /** Waits until `n` more comments (heartbeats) arrived. */
  async comment(n = 1, timeoutMs = 10_000) {
    const target = this.comments + n;
    const deadline = Date.now() + timeoutMs;
    while (this.comments < target) {
      if (this.done || Date.now() > deadline) throw new Error(`expected ${n} comments, got ${n - (target - this.comments)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  close() {
    this.res.destroy();
  }

  private parse(chunk: string) {
    if (this.status !== 200) {
      this.pending += chunk;
      return;
    }
    this.pending += chunk;
    let end: number;
    while ((end = this.pending.indexOf('\n\n')) >= 0) {
      const block = this.pending.slice(0, end);
      this.pending = this.pending.slice(end + 2);
      const message: SseMessage = { id: undefined, event: undefined, data: '' };
      let hasData = false;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments++;
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') message.id = value;
        else if (field === 'event') message.event = value;
        else if (field === 'retry') this.retryMs = Number(value);
        else if (field === 'data') {
          message.data += (hasData ? '\n' : '') + value;
          hasData = true;
        }
      }
      if (hasData) this.messages.push(message);
    }
    this.notify();
  }

  private notify() {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
