// devnode's environment variables, read once at start-up (by main.ts) and passed in, so the rest
// of devnode never looks at process.env and tests can build the settings they need.

export interface DevnodeEnv {
  /**
   * DEVNODE_HOST: address the REST and peer ports bind to. Defaults to loopback because devnode
   * runs on the host next to the service, and only the service's gateway should reach it. Real RLN
   * binds 0.0.0.0 (it normally runs in a container); set DEVNODE_HOST=0.0.0.0 to mimic that.
   */
  host: string;
  /**
   * DEVNODE_VERSION: the image version the runtime started, echoed in the start-up log so upgrades
   * are visible. Versions starting with `fail-` stand for a broken image (see isBrokenVersion).
   */
  version: string;
  /**
   * DEVNODE_SYNC_DELAY_MS: how long a wallet sync with the indexer takes, 0 by default. RLN syncs
   * before answering POST /btcbalance unless asked to skip it, and over a slow indexer that takes
   * seconds: the service's gateway meets a node that answers slowly (the monitoring tests' slow gateway).
   */
  syncDelayMs: number;
}

export function readDevnodeEnv(env: Readonly<Record<string, string | undefined>>): DevnodeEnv {
  return {
    host: env.DEVNODE_HOST?.trim() || '127.0.0.1',
    version: env.DEVNODE_VERSION?.trim() || 'devnode',
    syncDelayMs: readMilliseconds('DEVNODE_SYNC_DELAY_MS', env.DEVNODE_SYNC_DELAY_MS),
  };
}

/** A whole number of milliseconds, 0 when unset; anything else is refused at start-up. */
function readMilliseconds(name: string, value: string | undefined): number {
  const text = value?.trim() || '0';
  if (!/^\d+$/.test(text)) throw new Error(`${name} must be a whole number of milliseconds, not ${JSON.stringify(value)}`);
  return Number(text);
}

/**
 * A development feature: an image version named `fail-...` makes devnode exit with code 1 before it
 * listens, so the service's upgrade rollback can be exercised without building a broken image.
 */
export function isBrokenVersion(version: string): boolean {
  return version.startsWith('fail-');
}
