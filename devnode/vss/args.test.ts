import { describe, expect, it } from 'vitest';
import { ArgsError } from '../args.ts';
import { takeVssArgs } from './args.ts';

describe('takeVssArgs', () => {
  it('takes --vss-url (both spellings) and leaves the rest for RLN’s own parser', () => {
    expect(takeVssArgs(['/s', '--vss-url', 'https://vss.example/vss/n/c/', '--network', 'regtest'])).toEqual({
      vss: { url: 'https://vss.example/vss/n/c' },
      rest: ['/s', '--network', 'regtest'],
    });
    expect(takeVssArgs(['--vss-url=http://127.0.0.1:3000/vss/n/c']).vss).toEqual({ url: 'http://127.0.0.1:3000/vss/n/c' });
    expect(takeVssArgs(['/s']).vss).toBeUndefined();
  });

  it('allows plain http off loopback only with --vss-allow-http', () => {
    expect(() => takeVssArgs(['--vss-url', 'http://rln-cloud.ns.svc:3000/vss/n/c'])).toThrow(/plain http on a non-loopback host/);
    expect(takeVssArgs(['--vss-url', 'http://rln-cloud.ns.svc:3000/vss/n/c', '--vss-allow-http']).vss).toEqual({
      url: 'http://rln-cloud.ns.svc:3000/vss/n/c',
    });
  });

  it('refuses mistakes as command-line errors', () => {
    for (const argv of [['--vss-url'], ['--vss-url', '--network'], ['--vss-allow-http'], ['--vss-url', 'ftp://x/y'], ['--vss-url', 'not a url'], ['--vss-url=https://a', '--vss-url=https://b']]) {
      expect(() => takeVssArgs(argv), argv.join(' ')).toThrow(ArgsError);
    }
  });
});
