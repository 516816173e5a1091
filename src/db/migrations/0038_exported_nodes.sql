-- A node can leave (issue #41): POST /api/nodes/{id}/export makes a final backup with the owner's
-- password and, once it is stored, the node is EXPORTED: stopped for good, never started, upgraded,
-- unlocked or restored here again (nodes/lifecycle.ts), so that only the customer's copy of the
-- wallet lives.
--
-- nodes.status takes EXPORTED (the inline CHECK of 0001 is named nodes_status_check on PostgreSQL
-- and PGlite alike). node_status_as_recorded needs nothing: EXPORTED is recorded as itself, a word
-- no bill counts (domain/node-status-meaning.ts).
ALTER TABLE nodes DROP CONSTRAINT nodes_status_check;
ALTER TABLE nodes ADD CONSTRAINT nodes_status_check
  CHECK (status IN ('STARTING', 'RUNNING', 'IN_PROGRESS', 'PAUSED', 'FAILED', 'EXPORTED', 'DESTROYING', 'DESTROYED'));

-- backups.for_export: the export's final backup. Kept BACKUP_EXPORT_RETENTION_DAYS whatever ordinary
-- retention says, after its node is destroyed too; and it marks the wallet as gone with its owner
-- after the node itself is purged (backups/restore-fence.ts refuses restoring that wallet here).
-- Rolling update: NOT NULL DEFAULT false, which the previous version's inserts leave as it is.
ALTER TABLE backups ADD COLUMN for_export boolean NOT NULL DEFAULT false;
