// rgb-lightning-node's command line, which devnode accepts unchanged:
//   <storage_dir> --daemon-listening-port N --ldk-peer-listening-port N --network NET
//   (--disable-authentication | --root-public-key HEX)
export const NETWORKS = ['regtest', 'testnet', 'testnet4', 'signet', 'mainnet'] as const;
export type DaemonNetwork = (typeof NETWORKS)[number];

export interface DaemonArgs {
  storageDir: string;
  daemonPort: number;
  peerPort: number;
  network: DaemonNetwork;
  rootPublicKey: string | undefined;
}

export class ArgsError extends Error {}

export function parseDaemonArgs(argv: string[]): DaemonArgs {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) {
      positional.push(a);
    } else if (a === '--disable-authentication') {
      flags.set(a, true);
    } else {
      const value = argv[++i];
      if (value === undefined || value.startsWith('--')) throw new ArgsError(`${a} needs a value`);
      flags.set(a, value);
    }
  }
  const known = ['--daemon-listening-port', '--ldk-peer-listening-port', '--network', '--disable-authentication', '--root-public-key'];
  for (const f of flags.keys()) if (!known.includes(f)) throw new ArgsError(`unknown option ${f}`);
  if (positional.length !== 1) throw new ArgsError('expected exactly one storage directory argument');
  const port = (name: string) => {
    const raw = flags.get(name);
    if (typeof raw !== 'string' || !/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 65535) {
      throw new ArgsError(`${name} must be a port number`);
    }
    return Number(raw);
  };
  const network = flags.get('--network');
  if (typeof network !== 'string' || !(NETWORKS as readonly string[]).includes(network)) {
    throw new ArgsError(`--network must be one of ${NETWORKS.join(', ')}`);
  }
  const disabled = flags.has('--disable-authentication');
  const rootKey = flags.get('--root-public-key');
  if (disabled === (rootKey !== undefined)) {
    throw new ArgsError('exactly one of --disable-authentication or --root-public-key must be given');
  }
  if (typeof rootKey === 'string' && !/^[0-9a-fA-F]{64}$/.test(rootKey)) {
    throw new ArgsError('--root-public-key must be 32 bytes of hex');
  }
  return {
    storageDir: positional[0]!,
    daemonPort: port('--daemon-listening-port'),
    peerPort: port('--ldk-peer-listening-port'),
    network: network as DaemonNetwork,
    rootPublicKey: typeof rootKey === 'string' ? rootKey : undefined,
  };
}
