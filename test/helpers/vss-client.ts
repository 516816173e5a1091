// A VSS client written from the protocol (lightningdevkit/vss-server proto/vss.proto and
// vss-client's SigsAuthProvider), independent of the server's code: messages encoded by protobufjs
// from the repository's .proto, and "sigs" tokens signed with node:crypto (OpenSSL), not the
// server's @noble/curves, so a signature the test makes is a vector the server did not compute.
import { createECDH, createPrivateKey, createSign } from 'node:crypto';
import protobuf from 'protobufjs';

const root = protobuf.loadSync(new URL('../../src/vss/vss.proto', import.meta.url).pathname);
const type = (name: string) => root.lookupType(`vss.${name}`);

// secp256k1's group order: a signature's s above half of it is made low, as libsecp256k1 requires.
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const SALT = Buffer.from('VSS Signature Authorizer Signing Salt Constant..................', 'latin1');

export interface VssKey {
  publicKey: Buffer;
  /** The Authorization header for `time` (unix seconds), as vss-client builds it. */
  token(time?: number): string;
}

export function newVssKey(): VssKey {
  const ecdh = createECDH('secp256k1');
  ecdh.generateKeys();
  const uncompressed = ecdh.getPublicKey();
  const b64 = (b: Buffer) => b.toString('base64url');
  const privateKey = createPrivateKey({
    key: { kty: 'EC', crv: 'secp256k1', d: b64(ecdh.getPrivateKey()), x: b64(uncompressed.subarray(1, 33)), y: b64(uncompressed.subarray(33)) },
    format: 'jwk',
  });
  const publicKey = ecdh.getPublicKey(null, 'compressed');
  return {
    publicKey,
    token(time = Math.floor(Date.now() / 1000)) {
      const signer = createSign('sha256');
      signer.update(Buffer.concat([SALT, publicKey, Buffer.from(String(time))]));
      const sig = signer.sign({ key: privateKey, dsaEncoding: 'ieee-p1363' });
      let s = BigInt(`0x${sig.subarray(32).toString('hex')}`);
      if (s > N / 2n) s = N - s;
      const low = Buffer.concat([sig.subarray(0, 32), Buffer.from(s.toString(16).padStart(64, '0'), 'hex')]);
      return `${publicKey.toString('hex')}${low.toString('hex')}${time}`;
    },
  };
}

export interface VssAnswer {
  status: number;
  /** The decoded answer on 200, the ErrorResponse otherwise (when the body is one). */
  body: any;
  raw: Buffer;
}

export interface KV {
  key: string;
  version: number;
  value?: Buffer;
}

const ANSWER_TYPES: Record<string, string> = {
  getObject: 'GetObjectResponse',
  putObjects: 'PutObjectResponse',
  deleteObject: 'DeleteObjectResponse',
  listKeyVersions: 'ListKeyVersionsResponse',
};

export function vssClient(url: string, key: VssKey, opts: { token?: () => string } = {}) {
  const call = async (op: string, requestType: string, message: object): Promise<VssAnswer> => {
    const body = Buffer.from(type(requestType).encode(type(requestType).fromObject(message)).finish());
    const res = await fetch(`${url}/${op}`, {
      method: 'POST',
      headers: { authorization: opts.token ? opts.token() : key.token(), 'content-type': 'application/octet-stream' },
      body,
    });
    const raw = Buffer.from(await res.arrayBuffer());
    const answerType = type(res.status === 200 ? ANSWER_TYPES[op]! : 'ErrorResponse');
    let decoded: any;
    try {
      decoded = answerType.toObject(answerType.decode(raw), { longs: Number, defaults: true, bytes: Buffer });
    } catch {
      decoded = undefined;
    }
    return { status: res.status, body: decoded, raw };
  };
  return {
    get: (storeId: string, k: string) => call('getObject', 'GetObjectRequest', { storeId, key: k }),
    put: (storeId: string, items: KV[], opts: { globalVersion?: number; deletes?: KV[] } = {}) =>
      call('putObjects', 'PutObjectRequest', {
        storeId,
        ...(opts.globalVersion !== undefined ? { globalVersion: opts.globalVersion } : {}),
        transactionItems: items.map((i) => ({ key: i.key, version: i.version, value: i.value ?? Buffer.alloc(0) })),
        deleteItems: (opts.deletes ?? []).map((i) => ({ key: i.key, version: i.version })),
      }),
    delete: (storeId: string, kv: KV) => call('deleteObject', 'DeleteObjectRequest', { storeId, keyValue: { key: kv.key, version: kv.version } }),
    list: (storeId: string, opts: { keyPrefix?: string; pageSize?: number; pageToken?: string } = {}) =>
      call('listKeyVersions', 'ListKeyVersionsRequest', { storeId, ...opts }),
  };
}
