// devnode: an RLN-compatible development daemon (see README.md in this folder). Takes
// rgb-lightning-node's command line, serves RLN's lifecycle endpoints on the daemon port and holds
// the Lightning peer port. This file parses the command line and environment and wires the parts.
import { removeInterruptedLeftovers } from './backup-path.ts';
import { ArgsError, parseDaemonArgs, USAGE, wantsHelp, type DaemonArgs } from './args.ts';
import { Daemon } from './daemon.ts';
import { isBrokenVersion, readDevnodeEnv, type DevnodeEnv } from './env.ts';
import { createLogger } from './log.ts';
import { LocalNodeStore } from './node-store.ts';
import { StateFile } from './state.ts';
import { takeVssArgs, VSS_USAGE } from './vss/args.ts';
import { NodeState, type VssSettings } from './vss/continuous-state.ts';
import { RevokedTokens } from './revoked-tokens.ts';
import { TokenGate } from './token-gate.ts';
import { Wallet } from './wallet.ts';

const argv = process.argv.slice(2);
if (wantsHelp(argv)) {
  process.stdout.write(`${USAGE} ${VSS_USAGE}\n`);
  process.exit(0);
}

let args: DaemonArgs;
let vss: VssSettings | undefined;
try {
  const taken = takeVssArgs(argv);
  vss = taken.vss;
  args = parseDaemonArgs(taken.rest);
} catch (err) {
  if (!(err instanceof ArgsError)) throw err;
  process.stderr.write(`devnode: error: ${err.message}\n${USAGE} ${VSS_USAGE}\n`);
  process.exit(2);
}

let env: DevnodeEnv;
try {
  env = readDevnodeEnv(process.env);
} catch (err) {
  process.stderr.write(`devnode: error: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
}
const log = createLogger();

// Checked before anything touches the storage directory or a port: a broken image dies early.
if (isBrokenVersion(env.version)) {
  log.error(`devnode ${env.version}: versions named fail-* simulate a broken image; exiting without listening`);
  process.exit(1);
}

let wallet: Wallet;
try {
  wallet = new Wallet(StateFile.open(args.storageDir), log, new NodeState(new LocalNodeStore(args.storageDir), vss, log));
  const leftovers = removeInterruptedLeftovers(args.storageDir);
  if (leftovers.length > 0) log.info(`removed what an interrupted backup or restore left: ${leftovers.join(', ')}`);
} catch (err) {
  log.error(`cannot open storage ${args.storageDir}: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}

// RLN loads its revoked list at start and refuses to start on a damaged one.
let tokens: TokenGate | undefined;
if (args.rootPublicKey !== undefined) {
  try {
    tokens = new TokenGate(args.rootPublicKey, RevokedTokens.load(args.storageDir));
  } catch (err) {
    log.error(`cannot enable authentication: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}

let stopping = false;
const shutdown = (reason: string) => {
  if (stopping) return;
  stopping = true;
  log.info(`shutting down (${reason})`);
  // An unlocked node frees its VSS fence first, so the next instance may take the store.
  void Promise.all([daemon.stop(), wallet.close()]).then(() => {
    log.info('stopped');
    process.exit(0);
  });
};

const daemon = new Daemon({
  args,
  host: env.host,
  wallet,
  log,
  tokens,
  syncDelayMs: env.syncDelayMs,
  onShutdownRequested: () => shutdown('POST /shutdown'),
});
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));

try {
  await daemon.start();
} catch (err) {
  log.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}

log.info(
  `devnode ${env.version} started: network ${args.network}, REST http://${env.host}:${args.daemonPort}, ` +
    `peers ${env.host}:${args.peerPort}, authentication ${tokens ? 'biscuit tokens of the root key' : 'disabled'}, ` +
    `wallet ${wallet.initialized ? 'initialized' : 'not initialized'}, locked, ` +
    // The host only: the URL's path carries the store's credential.
    `continuous state ${vss ? `on (VSS at ${new URL(vss.url).host})` : 'off'}`,
);
