// Real clients of the original hosted service, replayed as they behave (../shared/ORIGINAL.md in
// the team's notes; docs/COMPATIBILITY.md): the headers, bodies and order of
// calls they send, and how they read answers. Only the base URLs are ours. Never weaken one of
// these to let a change pass: a client in the field would break the same way.

export interface Answer {
  status: number;
  json: any;
  text: string;
}

async function send(url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json, text };
}

/**
 * The original service's public API test suite: `Content-Type: application/json` on every call,
 * GETs included, and `Authorization: <token>` with no scheme everywhere but on destroy, which sends
 * `Authorization: Bearer <token>`. It reads the create answer's node at `data.node`.
 */
export class OriginalApiSuite {
  constructor(
    private readonly apiBase: string,
    private readonly token: string,
  ) {}

  private headers(bearer = false) {
    return { 'Content-Type': 'application/json', Authorization: bearer ? `Bearer ${this.token}` : this.token };
  }

  createNode(name: string, network: 'regtest' | 'testnet') {
    return send(`${this.apiBase}/api/nodes`, 'POST', this.headers(), { name, network });
  }

  getNode(id: string) {
    return send(`${this.apiBase}/api/nodes/${id}`, 'GET', this.headers());
  }

  health(id: string) {
    return send(`${this.apiBase}/api/nodes/${id}/health`, 'GET', this.headers());
  }

  unlock(id: string, body: { password: string; announce_addresses: string[]; announce_alias: string; network: string; node_endpoint: string }) {
    return send(`${this.apiBase}/api/nodes/${id}/unlock`, 'POST', this.headers(), body);
  }

  /** A node path call: `<invoke_url>` + route, as the suite builds it. */
  nodeCall(invokeUrl: string, route: string, method: 'GET' | 'POST', body?: unknown) {
    return send(`${invokeUrl}${route}`, method, this.headers(), body);
  }

  destroy(id: string) {
    return send(`${this.apiBase}/api/nodes`, 'DELETE', this.headers(true), { destroyNodeId: id });
  }

  /** Polls the node until `data.status` is RUNNING with its peer address, as the suite does. */
  async waitUntilRunning(id: string, timeoutMs = 60_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await this.getNode(id);
      if (r.status === 200 && r.json?.data?.status === 'RUNNING' && r.json.data.peerDNS && r.json.data.peerPort) return r.json.data;
      if (Date.now() > deadline) throw new Error(`node ${id} not RUNNING with peerDNS/peerPort: ${r.status} ${r.text}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** Polls `nodeinfo` until it is not a 500, as the suite does, and answers what it then got. */
  async nodeinfoOnceUp(invokeUrl: string, timeoutMs = 30_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await this.nodeCall(invokeUrl, 'nodeinfo', 'GET');
      if (r.status !== 500 || Date.now() > deadline) return r;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/**
 * The mobile wallet that ran each user's node on the original: it stores the node's URL as the
 * user pasted it (the invoke URL the UI copies, trailing slash included) and appends `/<route>` to
 * it, sends the Authorization value exactly as stored (with or without `Bearer `) and
 * `Content-Type: application/json` on every call, and shows a failure as `new Error(body.error)`.
 */
export class WalletNodeClient {
  constructor(
    private readonly storedUrl: string,
    private readonly storedAuthorization: string,
  ) {}

  async call(route: string, body?: unknown): Promise<any> {
    const r = await send(`${this.storedUrl}/${route}`, body === undefined ? 'GET' : 'POST', { 'Content-Type': 'application/json', Authorization: this.storedAuthorization }, body);
    if (r.status < 200 || r.status >= 300) {
      const err = new Error(r.json?.error) as Error & { status: number; body: any };
      err.status = r.status;
      err.body = r.json;
      throw err;
    }
    return r.json;
  }

  /** The failure the wallet shows its user: `new Error(body.error).message`. */
  async failure(route: string, body?: unknown): Promise<{ message: string; status: number; body: any }> {
    try {
      await this.call(route, body);
    } catch (err) {
      const e = err as Error & { status: number; body: any };
      return { message: e.message, status: e.status, body: e.body };
    }
    throw new Error(`${route} succeeded; the test expected a failure`);
  }
}

/** RLN's flat unlock body, as the wallet sends it: the chain hosts it uses at the time included. */
export function walletUnlockBody(password: string) {
  return {
    password,
    bitcoind_rpc_username: 'user',
    bitcoind_rpc_password: 'password',
    bitcoind_rpc_host: 'regtest-bitcoind.wallet.example',
    bitcoind_rpc_port: 18443,
    indexer_url: 'regtest-electrum.wallet.example:50001',
    proxy_endpoint: 'rpcs://regtest-proxy.wallet.example/json-rpc',
    announce_addresses: [],
    announce_alias: null,
  };
}
