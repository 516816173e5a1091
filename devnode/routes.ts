// devnode's REST API: RLN's lifecycle endpoints with RLN's error bodies
// `{"error": "<text>", "code": <status>, "name": "<Name>"}`.
import type { IncomingMessage } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { DaemonNetwork } from './args.ts';
import type { WalletStore } from './state.ts';

export interface Reply {
  status: number;
  body: unknown;
}

export class RlnError extends Error {
  constructor(public readonly status: number, public readonly rlnName: string, message: string) {
    super(message);
  }
}

const locked = () => new RlnError(403, 'LockedNode', 'Node is locked (hint: call unlock)');
const NETWORK_NAMES: Record<DaemonNetwork, string> = {
  regtest: 'Regtest', testnet: 'Testnet', testnet4: 'Testnet4', signet: 'Signet', mainnet: 'Bitcoin',
};

export interface RouteContext {
  wallet: WalletStore;
  network: DaemonNetwork;
  requestShutdown: () => void;
}

type Handler = (ctx: RouteContext, body: Record<string, unknown>) => unknown;

const requireUnlocked = (ctx: RouteContext) => {
  if (!ctx.wallet.unlocked) throw locked();
};
const requireLocked = (ctx: RouteContext) => {
  if (ctx.wallet.unlocked) throw new RlnError(403, 'UnlockedNode', 'Node is unlocked (hint: call lock)');
};
const stringField = (body: Record<string, unknown>, name: string) => {
  const v = body[name];
  if (typeof v !== 'string') throw new RlnError(400, 'InvalidRequest', `Invalid request: missing field \`${name}\``);
  return v;
};

const ROUTES: Record<string, Handler> = {
  'POST /init': (ctx, body) => {
    requireLocked(ctx);
    if (ctx.wallet.state.initialized) throw new RlnError(403, 'AlreadyInitialized', 'Node has already been initialized');
    const password = stringField(body, 'password');
    if (password.length < 8) throw new RlnError(400, 'InvalidPassword', 'Invalid password: must be at least 8 characters');
    const mnemonic = typeof body.mnemonic === 'string' ? body.mnemonic : undefined;
    if (mnemonic !== undefined && mnemonic.trim().split(/\s+/).length !== 12) {
      throw new RlnError(400, 'InvalidMnemonic', 'Invalid mnemonic');
    }
    return { mnemonic: ctx.wallet.init(password, mnemonic) };
  },
  // Accepts the current body (ldk_chain_sync, indexer_url, ...) and the older flat one
  // (bitcoind_rpc_*, proxy_endpoint, ...): devnode syncs no chain, so only the password matters.
  'POST /unlock': (ctx, body) => {
    if (ctx.wallet.unlocked) throw new RlnError(403, 'AlreadyUnlocked', 'Node has already been unlocked');
    if (!ctx.wallet.state.initialized) throw new RlnError(403, 'NotInitialized', 'Wallet has not been initialized (hint: call init)');
    const password = stringField(body, 'password');
    if (!ctx.wallet.checkPassword(password)) throw new RlnError(401, 'WrongPassword', 'The provided password is incorrect');
    ctx.wallet.unlocked = true;
    return {};
  },
  'POST /lock': (ctx) => {
    requireUnlocked(ctx);
    ctx.wallet.unlocked = false;
    return {};
  },
  'POST /changepassword': (ctx, body) => {
    requireLocked(ctx);
    if (!ctx.wallet.state.initialized) throw new RlnError(403, 'NotInitialized', 'Wallet has not been initialized (hint: call init)');
    const oldPassword = stringField(body, 'old_password');
    const newPassword = stringField(body, 'new_password');
    if (!ctx.wallet.checkPassword(oldPassword)) throw new RlnError(401, 'WrongPassword', 'The provided password is incorrect');
    if (newPassword.length < 8) throw new RlnError(400, 'InvalidPassword', 'Invalid password: must be at least 8 characters');
    ctx.wallet.changePassword(newPassword);
    return {};
  },
  'POST /shutdown': (ctx) => {
    ctx.requestShutdown();
    return {};
  },
  'GET /nodeinfo': (ctx) => {
    requireUnlocked(ctx);
    return {
      pubkey: ctx.wallet.state.pubkey,
      num_channels: 0,
      num_usable_channels: 0,
      local_balance_sat: 0,
      eventual_close_fees_sat: 0,
      pending_outbound_payments_sat: 0,
      num_peers: 0,
      onchain_pubkey: ctx.wallet.state.pubkey,
      max_media_upload_size_mb: 5,
    };
  },
  'GET /networkinfo': (ctx) => {
    requireUnlocked(ctx);
    return { network: NETWORK_NAMES[ctx.network], height: 150 };
  },
  'POST /address': (ctx) => {
    requireUnlocked(ctx);
    const prefix = ctx.network === 'mainnet' ? 'bc1q' : ctx.network === 'regtest' ? 'bcrt1q' : 'tb1q';
    return { address: prefix + randomBytes(20).toString('hex').slice(0, 38) };
  },
  'POST /btcbalance': (ctx) => {
    requireUnlocked(ctx);
    const zero = { settled: 0, future: 0, spendable: 0 };
    return { vanilla: zero, colored: zero };
  },
  'GET /listchannels': (ctx) => {
    requireUnlocked(ctx);
    return { channels: [] };
  },
  'GET /listpeers': (ctx) => {
    requireUnlocked(ctx);
    return { peers: [] };
  },
};

export function route(ctx: RouteContext, method: string, path: string, rawBody: string): Reply {
  const handler = ROUTES[`${method} ${path}`];
  try {
    if (!handler) throw new RlnError(404, 'NotFound', `Route ${method} ${path} not found`);
    let body: Record<string, unknown> = {};
    if (rawBody.trim() !== '') {
      try {
        const parsed = JSON.parse(rawBody);
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
        body = parsed;
      } catch {
        throw new RlnError(400, 'InvalidRequest', 'Invalid request: body is not a JSON object');
      }
    }
    return { status: 200, body: handler(ctx, body) };
  } catch (err) {
    if (err instanceof RlnError) return { status: err.status, body: { error: err.message, code: err.status, name: err.rlnName } };
    throw err;
  }
}

export function readBody(req: IncomingMessage, limit = 1024 * 1024): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new RlnError(413, 'InvalidRequest', 'Request body too large'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
