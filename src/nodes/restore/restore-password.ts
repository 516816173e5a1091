// A restore password is sealed (secrets/unlock-seal.ts) by the node service when a node is created
// from a backup, and opened by that node's create build (backups/restore-into-node.ts): this is what
// binds it to the one restore, so no other use of the seal (automatic unlock) can open it.
export const restoreSealContext = (nodeId: string) => `restore/${nodeId}`;
