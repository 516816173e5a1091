// The notification emails a person can turn off, each kind on its own (docs/ACCOUNTS.md
// "Notifications"). Every kind is on until its person turns it off.
export const NOTIFICATION_KINDS = ['node-failed', 'node-storage-lost', 'backup-failed', 'api-calls-80', 'api-calls-100'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

/** The API's name of each kind (GET/PUT /api/notifications), in camelCase like every other field. */
export const NOTIFICATION_FIELDS = {
  nodeFailed: 'node-failed',
  nodeStorageLost: 'node-storage-lost',
  backupFailed: 'backup-failed',
  apiCalls80: 'api-calls-80',
  apiCalls100: 'api-calls-100',
} as const satisfies Record<string, NotificationKind>;
export type NotificationField = keyof typeof NOTIFICATION_FIELDS;
