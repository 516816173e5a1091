// Which IP addresses a webhook may connect to. A webhook URL is chosen by a user but fetched by the
// service from inside its network, so without this check a user could make the service call its
// own admin channel, a database, or the cloud metadata endpoint (169.254.169.254) for them.
import { BlockList, isIP } from 'node:net';

// Everything that is not a public unicast address: loopback, private, shared (CGNAT), link-local
// (cloud metadata), multicast, unspecified, reserved, documentation and benchmarking ranges.
const REFUSED: Array<[string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'private (shared address space)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved'],
  ['192.0.2.0', 24, 'ipv4', 'documentation'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'reserved (benchmarking)'],
  ['198.51.100.0', 24, 'ipv4', 'documentation'],
  ['203.0.113.0', 24, 'ipv4', 'documentation'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['64:ff9b:1::', 48, 'ipv6', 'private (NAT64)'],
  ['100::', 64, 'ipv6', 'reserved (discard)'],
  ['2001:db8::', 32, 'ipv6', 'documentation'],
  ['fc00::', 7, 'ipv6', 'private (unique local)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'private (site-local)'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const lists = REFUSED.map(([net, prefix, family, kind]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, family);
  return { list, family, kind };
});

/**
 * Why the service must not connect to `address`, or undefined when it is a public unicast address.
 * IPv6 forms that embed an IPv4 address (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16,
 * the deprecated compatible ::a.b.c.d) are judged by the IPv4 address they reach.
 */
export function refusedAddressKind(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const embedded = embeddedIpv4(address);
    if (embedded !== undefined) return refusedAddressKind(embedded);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return lists.find((l) => l.family === type && l.list.check(address, type))?.kind;
}

function embeddedIpv4(address: string): string | undefined {
  const words = expandIpv6(address);
  if (!words) return undefined;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zero = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  if (zero(0, 5) && words[5] === 0xffff) return v4(words[6]!, words[7]!); // ::ffff:a.b.c.d
  if (zero(0, 6) && (words[6] !== 0 || words[7]! > 1)) return v4(words[6]!, words[7]!); // ::a.b.c.d
  if (words[0] === 0x64 && words[1] === 0xff9b && zero(2, 6)) return v4(words[6]!, words[7]!); // NAT64
  if (words[0] === 0x2002) return v4(words[1]!, words[2]!); // 6to4
  return undefined;
}

/** The eight 16-bit words of an IPv6 address (with an optional dotted IPv4 tail), or undefined. */
function expandIpv6(address: string): number[] | undefined {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -dotted[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((w) => parseInt(w, 16)));
  const h = parse(head);
  const t = tail === undefined ? [] : parse(tail);
  const fill = 8 - h.length - t.length;
  if (fill < 0 || (tail === undefined && fill !== 0)) return undefined;
  return [...h, ...new Array(fill).fill(0), ...t];
}
