// What the service adds to an unlock for one network (chain sync, indexer, RGB proxy), and how it
// decides the form of the body: the operator's settings, read by gateway/settings.ts.
/** What the service adds to a user's unlock for one network: chain sync, indexer and RGB proxy. */
export interface ChainSettings {
  /** `bitcoind`: RLN syncs blocks from bitcoind (BlockSync); `indexer`: from the indexer (TransactionSync). */
  chainSync: 'bitcoind' | 'indexer';
  bitcoindRpcHost: string;
  bitcoindRpcPort: number;
  bitcoindRpcUsername: string;
  /** A secret: never logged, never shown to users (the gateway only sends it to the node). */
  bitcoindRpcPassword: string;
  indexerUrl: string;
  proxyEndpoint: string;
}

/** The settings an unlock is completed with (gateway/settings.ts's NodeAccessConfig holds them). */
export interface UnlockSettings {
  chain: { regtest: ChainSettings; testnet: ChainSettings };
  /** The unlock body nodes take: RLN's current one (ldk_chain_sync) or the older flat one. */
  unlockBodyFormat: 'current' | 'flat';
  /** Image versions that take the flat body whatever unlockBodyFormat says (older RLN builds). */
  unlockFlatVersions: string[];
  /** Whose chain settings win where a client's unlock names its own (UNLOCK_CHAIN_SETTINGS). */
  unlockChainSettings: 'client' | 'operator';
}
