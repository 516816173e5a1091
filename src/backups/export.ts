// A node can leave: POST /api/nodes/{id}/export makes a final backup with the owner's password
// (BackupService runs it like any other, the password in memory only) and, once it is stored, the
// node is EXPORTED for good (backup-run.ts, lifecycle.ts `exportCompleted`): only the customer's
// copy of the wallet lives. Here: what an export must satisfy before it starts, and the commands
// that run RLN with the file elsewhere (docs/BACKUPS.md "Taking a node away" says them too).
import type { Queryable } from '../db/database.ts';
import { findBuildInProgress } from '../db/builds.ts';
import { AppError } from '../errors.ts';
import type { Node } from '../domain/nodes.ts';
import { decide, refusalError } from '../nodes/lifecycle.ts';

/**
 * The export is confirmed by the node's name (a destructive step, typed on purpose), and the
 * lifecycle table accepts it: RUNNING, initialised, no build in progress, not superseded, exported
 * or destroyed. Throws 400 export_not_confirmed or the table's 409.
 */
export async function requireExportable(tx: Queryable, node: Node, confirm: string) {
  if (confirm !== node.name) {
    throw new AppError(
      'export_not_confirmed',
      `confirm must be the node's name (${JSON.stringify(node.name)}): an export stops the node for good and it never runs here again`,
      { name: node.name },
    );
  }
  const decision = decide({ type: 'export' }, node, await findBuildInProgress(tx, node.id));
  if (decision.outcome === 'refused') throw refusalError(decision.refusal);
}

/** Where the guide to running the exported file elsewhere is, from the service's public URL. */
export const RESTORE_HELP = 'docs/BACKUPS.md#taking-a-node-away';

/**
 * The commands that restore the export's file on a fresh RLN node elsewhere, with the backup's own
 * file name; `<password>` is the export's password, which the service never keeps.
 */
export function restoreCommands(nodeId: string, backupId: string, network: string): string[] {
  const file = `rln-node-${nodeId}-backup-${backupId}.rlnbackup`;
  return [
    `curl -fo ${file} "<downloadUrl of GET /api/nodes/${nodeId}/backups/${backupId}>"`,
    'mkdir -p rln-node/client-backups',
    `mv ${file} rln-node/client-backups/`,
    // Without authentication, unlike the service's own nodes (issue #40): the node's root key stays
    // with the service, and a customer's machine needs Biscuit tools of its own to make one. Bound to
    // localhost here; docs/BACKUPS.md says to use --root-public-key on any host others can reach.
    `rgb-lightning-node rln-node/storage --daemon-listening-port 3001 --ldk-peer-listening-port 9735 --network ${network} --disable-authentication &`,
    `curl -fsS -X POST http://127.0.0.1:3001/restore -H 'content-type: application/json' -d '{"backup_path": "rln-node/client-backups/${file}", "password": "<password>"}'`,
    `curl -fsS -X POST http://127.0.0.1:3001/unlock -H 'content-type: application/json' -d '{"password": "<password>", ...your chain settings (docs/BACKUPS.md)}'`,
  ];
}
