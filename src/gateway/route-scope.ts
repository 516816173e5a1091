// Which node routes a read-only API token may call through the bearer gateway.
//
// RLN itself answers this question for its own read-only role: the list below is READ_ONLY_OPS
// of RGB-Tools/rgb-lightning-node src/auth.rs (checked against commit 6887cbf, August 2026), the
// routes "that do not make any write operations". Like RLN, it is an allow-list of paths: a route
// that is not on it is treated as one that changes the node (unlock, lock, init, sendpayment,
// openchannel, backup, restore, address, lninvoice, rgbinvoice, signmessage, sync, refreshtransfers
// and every route a later RLN version adds), so a read-only token can never do more than RLN's own
// read-only role. Each of these paths takes one method in RLN (GET for nodeinfo, networkinfo and
// the list* routes that have no body, POST for the others); another method answers RLN's 405.
// The node itself (`GET {gateway}/<user_id>/<node_id>`, answered by the gateway) is a read too.
//
// Matching is on the route as the gateway forwards it (route-path.ts: one canonical spelling, so
// `%6Eodeinfo` is `nodeinfo`), exactly and case-sensitively, as RLN matches it: `nodeinfo/` or
// `NodeInfo` are not on the list.

export const READ_ONLY_NODE_ROUTES: ReadonlySet<string> = new Set([
  'assetbalance',
  'assetmetadata',
  'btcbalance',
  'checkindexerurl',
  'checkproxyendpoint',
  'decodelninvoice',
  'decodergbinvoice',
  'decodeswapstring',
  'estimatefee',
  'getassetmedia',
  'getchannelid',
  'getconsignment',
  'getpayment',
  'getswap',
  'invoicestatus',
  'listassets',
  'listchannels',
  'listpayments',
  'listpeers',
  'listswaps',
  'listtransactions',
  'listtransfers',
  'listunspents',
  'networkinfo',
  'nodeinfo',
]);

/** The same routes as RLN names them (`/nodeinfo`): what a custom node token's rights hold. */
export const RLN_READ_ONLY_ROUTE_NAMES: ReadonlySet<string> = new Set([...READ_ONLY_NODE_ROUTES].map((route) => `/${route}`));

/** Whether a request for `route` (e.g. 'nodeinfo'; '' for the node itself) only reads. */
export function isReadOnlyNodeRequest(method: string, route: string): boolean {
  if (route === '') return method === 'GET' || method === 'HEAD';
  return READ_ONLY_NODE_ROUTES.has(route);
}
