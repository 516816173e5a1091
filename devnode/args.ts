// rgb-lightning-node's command line, which devnode accepts unchanged so the runtime can start either
// daemon with the same arguments:
//   <storage_dir> --daemon-listening-port N --ldk-peer-listening-port N --network NET
//   (--disable-authentication | --root-public-key HEX)
// Like clap (RLN's parser), `--flag value` and `--flag=value` are both accepted.
export const NETWORKS = ['regtest', 'testnet', 'testnet4', 'signet', 'mainnet'] as const;
export type DaemonNetwork = (typeof NETWORKS)[number];

export interface DaemonArgs {
  storageDir: string;
  daemonPort: number;
  peerPort: number;
  network: DaemonNetwork;
  /** Hex ed25519 key when authentication is on; undefined with --disable-authentication. */
  rootPublicKey: string | undefined;
}

export const USAGE =
  'usage: devnode <storage_dir> --daemon-listening-port <port> --ldk-peer-listening-port <port> ' +
  `--network <${NETWORKS.join('|')}> (--disable-authentication | --root-public-key <64 hex chars>)`;

/** A command-line mistake: reported on stderr with exit code 2, as clap does. */
export class ArgsError extends Error {}

const VALUE_OPTIONS = ['--daemon-listening-port', '--ldk-peer-listening-port', '--network', '--root-public-key'];
const SWITCHES = ['--disable-authentication'];

export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

export function parseDaemonArgs(argv: readonly string[]): DaemonArgs {
  const positional: string[] = [];
  const options = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg : arg.slice(0, eq);
    if (options.has(name)) throw new ArgsError(`${name} given more than once`);
    if (SWITCHES.includes(name)) {
      if (eq !== -1) throw new ArgsError(`${name} takes no value`);
      options.set(name, true);
    } else if (VALUE_OPTIONS.includes(name)) {
      const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
      if (value === undefined || value === '' || value.startsWith('--')) throw new ArgsError(`${name} needs a value`);
      options.set(name, value);
    } else {
      throw new ArgsError(`unknown option ${name}`);
    }
  }

  if (positional.length === 0) throw new ArgsError('missing the storage directory argument');
  if (positional.length > 1) throw new ArgsError(`expected one storage directory, got ${positional.length} arguments: ${positional.join(' ')}`);

  const network = options.get('--network');
  if (network === undefined) throw new ArgsError('missing --network');
  if (!(NETWORKS as readonly (string | true)[]).includes(network)) {
    throw new ArgsError(`--network must be one of ${NETWORKS.join(', ')} (got ${String(network)})`);
  }

  const disabled = options.has('--disable-authentication');
  const rootKey = options.get('--root-public-key');
  if (disabled && rootKey !== undefined) {
    throw new ArgsError('give either --disable-authentication or --root-public-key, not both');
  }
  if (!disabled && rootKey === undefined) {
    throw new ArgsError('authentication must be chosen: give --disable-authentication or --root-public-key');
  }
  if (typeof rootKey === 'string' && !/^[0-9a-fA-F]{64}$/.test(rootKey)) {
    throw new ArgsError('--root-public-key must be 64 hex characters (an ed25519 public key)');
  }

  const daemonPort = port(options, '--daemon-listening-port');
  const peerPort = port(options, '--ldk-peer-listening-port');
  if (daemonPort === peerPort) throw new ArgsError('--daemon-listening-port and --ldk-peer-listening-port must differ');

  return {
    storageDir: positional[0]!,
    daemonPort,
    peerPort,
    network: network as DaemonNetwork,
    rootPublicKey: typeof rootKey === 'string' ? rootKey.toLowerCase() : undefined,
  };
}

function port(options: Map<string, string | true>, name: string): number {
  const raw = options.get(name);
  if (raw === undefined) throw new ArgsError(`missing ${name}`);
  // Port 0 would make the OS pick one, and nobody could find the daemon.
  if (typeof raw !== 'string' || !/^\d{1,5}$/.test(raw) || Number(raw) < 1 || Number(raw) > 65535) {
    throw new ArgsError(`${name} must be a port number between 1 and 65535 (got ${String(raw)})`);
  }
  return Number(raw);
}
