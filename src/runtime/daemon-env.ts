// What a node daemon started by the process runtime may see of the service's environment. Not the
// whole of it: that holds DATABASE_URL, S3 credentials and the bitcoind password, and a daemon
// (or anything it runs) has no business reading them. A daemon gets what a program needs to run
// (PATH, HOME, locale, time zone, temp dir), RLN's own logging switches, devnode's settings, and
// the image version it runs.
const PASSED = new Set(['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR', 'RUST_LOG', 'RUST_BACKTRACE']);
const PASSED_PREFIXES = ['DEVNODE_'];

/** The part of the service's environment a daemon may see (the configuration keeps this, see config.ts). */
export function passedToDaemons(serviceEnv: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(serviceEnv)) {
    if (value !== undefined && (PASSED.has(name) || PASSED_PREFIXES.some((p) => name.startsWith(p)))) env[name] = value;
  }
  return env;
}

export function daemonEnvironment(serviceEnv: NodeJS.ProcessEnv, imageVersion: string): NodeJS.ProcessEnv {
  return { ...passedToDaemons(serviceEnv), DEVNODE_VERSION: imageVersion };
}
