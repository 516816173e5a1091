// The delivery-time half of the target check: a DNS lookup for the HTTP client that refuses to hand
// it a forbidden address. The socket can only connect to what this returns, so a name that resolved
// to a public address when the URL was saved and to 127.0.0.1 now (DNS rebinding) is refused at
// the moment of connecting, not merely at the moment of saving.
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { refusedAddressKind } from './address-policy.ts';

export class RefusedTargetError extends Error {
  readonly code = 'EWEBHOOKTARGET';
}

/** `resolve` answers every address of a host (dns.lookup with all: true by default). */
export type ResolveForConnect = (hostname: string, family: number) => Promise<dns.LookupAddress[]>;

export const systemResolveForConnect: ResolveForConnect = (hostname, family) =>
  dns.promises.lookup(hostname, { all: true, family: family as 0 | 4 | 6 });

/** `refusePrivate` false only swaps the resolver (private targets allowed by the operator). */
export function guardedLookup(resolve: ResolveForConnect = systemResolveForConnect, refusePrivate = true): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, options.family === 4 || options.family === 6 ? options.family : 0).then(
      (addresses) => {
        // One forbidden answer refuses the whole name: the client may pick any of them.
        for (const { address } of refusePrivate ? addresses : []) {
          const kind = refusedAddressKind(address);
          if (kind) {
            return callback(new RefusedTargetError(`${hostname} resolves to ${address}, a ${kind} address; webhook targets must be public`), '', 0);
          }
        }
        if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
        if (options.all) return callback(null, addresses);
        callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err) => callback(err, '', 0),
    );
  };
}
