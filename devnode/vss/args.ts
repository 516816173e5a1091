// RLN's fork's VSS flags, taken out of the command line before the rest is parsed (args.ts):
//   --vss-url <url>      the store's URL: https, or http on a loopback host or with --vss-allow-http
//   --vss-allow-http     allows a plain http URL elsewhere (inside a cluster's network)
import { ArgsError } from '../args.ts';
import type { VssSettings } from './continuous-state.ts';

/** Appended to args.ts's USAGE. */
export const VSS_USAGE = '[--vss-url <https url> [--vss-allow-http]]';

export function takeVssArgs(argv: readonly string[]): { vss: VssSettings | undefined; rest: string[] } {
  const rest: string[] = [];
  let url: string | undefined;
  let allowHttp = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--vss-allow-http') {
      if (allowHttp) throw new ArgsError('--vss-allow-http given more than once');
      allowHttp = true;
    } else if (arg === '--vss-url' || arg.startsWith('--vss-url=')) {
      if (url !== undefined) throw new ArgsError('--vss-url given more than once');
      const value = arg === '--vss-url' ? argv[++i] : arg.slice('--vss-url='.length);
      if (value === undefined || value === '' || value.startsWith('--')) throw new ArgsError('--vss-url needs a value');
      url = value;
    } else {
      rest.push(arg);
    }
  }
  if (url === undefined) {
    if (allowHttp) throw new ArgsError('--vss-allow-http needs --vss-url');
    return { vss: undefined, rest };
  }
  return { vss: { url: checkedUrl(url, allowHttp) }, rest };
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

function checkedUrl(raw: string, allowHttp: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ArgsError(`--vss-url is not a URL: ${raw}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ArgsError('--vss-url must be an https:// (or http://) URL');
  // The store's credential and the node's state travel in it: plain http only where no one listens in.
  if (url.protocol === 'http:' && !allowHttp && !LOOPBACK.test(url.hostname)) {
    throw new ArgsError('--vss-url is plain http on a non-loopback host; use https, or give --vss-allow-http');
  }
  return url.toString().replace(/\/+$/, '');
}
