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
    /** The node API host the suite is configured with (NODE_API_URL here). */
    private readonly nodeApiBase: string,
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

  /**
   * A node path call, built as the suite builds it: the node API host + what follows '/nodes' in
   * invoke_url (`/<user_id>/<node_id>/`) + the route, with no slash before it.
   */
  nodeCall(invokeUrl: string, route: string, method: 'GET' | 'POST', body?: unknown) {
    return send(`${this.nodeApiBase}${invokeUrl.split('/nodes')[1]}${route}`, method, this.headers(), body);
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
 * An older script of the original's suite: its cloud base ends in '/' and it appends '/api/...',
 * so every management call goes to `<cloud>/api//nodes...`, bare token and JSON content type.
 */
export class OlderOriginalScript {
  constructor(
    private readonly apiBase: string,
    private readonly token: string,
  ) {}

  call(path: string, method: 'GET' | 'POST' | 'DELETE', body?: unknown) {
    return send(`${this.apiBase}/api/${path}`, method, { 'Content-Type': 'application/json', Authorization: this.token }, body);
  }
}

/**
 * The original's VSS server fork: it authenticates each customer request by sending the
 * customer's token to the cloud API's `GET /api/verify`, as it was given (bare or `Bearer `), and
 * keys the customer's storage by the answer's `sub`; anything but a 200 is a refusal.
 */
export async function vssVerify(apiBase: string, authorization: string): Promise<{ ok: true; sub: string } | { ok: false; status: number; json: any }> {
  const r = await send(`${apiBase}/api/verify`, 'GET', { Authorization: authorization });
  if (r.status !== 200) return { ok: false, status: r.status, json: r.json };
  return { ok: true, sub: r.json.sub };
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
