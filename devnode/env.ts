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
}

export function readDevnodeEnv(env: Readonly<Record<string, string | undefined>>): DevnodeEnv {
  return {
    host: env.DEVNODE_HOST?.trim() || '127.0.0.1',
    version: env.DEVNODE_VERSION?.trim() || 'devnode',
  };
}

/**
 * A development feature: an image version named `fail-...` makes devnode exit with code 1 before it
 * listens, so the service's upgrade rollback can be exercised without building a broken image.
 */
export function isBrokenVersion(version: string): boolean {
  return version.startsWith('fail-');
}
