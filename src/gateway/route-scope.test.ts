import { describe, expect, it } from 'vitest';
import { isReadOnlyNodeRequest, READ_ONLY_NODE_ROUTES } from './route-scope.ts';

describe('isReadOnlyNodeRequest', () => {
  it("is RLN's own read-only list (src/auth.rs READ_ONLY_OPS): 25 routes", () => {
    expect(READ_ONLY_NODE_ROUTES.size).toBe(25);
    for (const route of ['nodeinfo', 'networkinfo', 'listchannels', 'listpeers', 'listpayments', 'listswaps']) expect(isReadOnlyNodeRequest('GET', route)).toBe(true);
    for (const route of ['btcbalance', 'assetbalance', 'listassets', 'listtransactions', 'listunspents', 'decodelninvoice', 'invoicestatus', 'getassetmedia', 'checkindexerurl']) {
      expect(isReadOnlyNodeRequest('POST', route)).toBe(true);
    }
  });

  it('treats every other route as one that changes the node, including routes it does not know', () => {
    const writes = ['unlock', 'lock', 'init', 'changepassword', 'backup', 'restore', 'shutdown', 'sendpayment', 'keysend', 'openchannel', 'closechannel',
      'connectpeer', 'disconnectpeer', 'sendbtc', 'sendrgb', 'issueassetnia', 'address', 'lninvoice', 'rgbinvoice', 'signmessage', 'sync',
      'refreshtransfers', 'failtransfers', 'createutxos', 'revoketoken', 'postassetmedia', 'some-future-route'];
    for (const route of writes) {
      expect(isReadOnlyNodeRequest('POST', route), route).toBe(false);
      expect(isReadOnlyNodeRequest('GET', route), route).toBe(false);
    }
  });

  it('matches the canonical route exactly: no trailing slash, no other case, no sub-path', () => {
    for (const route of ['nodeinfo/', 'NodeInfo', 'NODEINFO', 'nodeinfo/x', '/nodeinfo', 'nodeinfo?']) expect(isReadOnlyNodeRequest('GET', route), route).toBe(false);
  });

  it('reads the node itself (the status document) only with GET or HEAD', () => {
    expect(isReadOnlyNodeRequest('GET', '')).toBe(true);
    expect(isReadOnlyNodeRequest('HEAD', '')).toBe(true);
    expect(isReadOnlyNodeRequest('POST', '')).toBe(false);
    expect(isReadOnlyNodeRequest('DELETE', '')).toBe(false);
  });
});
