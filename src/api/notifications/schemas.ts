// The answers of the notification preference routes (notifications/service.ts keeps them): a
// person's own, like their sessions, the same in whichever account they act.
import { Type, type Static } from '@sinclair/typebox';
import type { Notifications } from '../../notifications/service.ts';

const toggle = (description: string) => Type.Boolean({ description });

const FIELDS = {
  nodeFailed: toggle('A node of the account became FAILED (a build could not bring its daemon up).'),
  nodeStorageLost: toggle("A node of the account lost its storage (STORAGE_LOST: its volume is gone; it waits for a recover)."),
  backupFailed: toggle('A backup of a node of the account failed.'),
  apiCalls80: toggle("The account has made 80% of its plan's API calls of the month (UTC)."),
  apiCalls100: toggle("The account has made all of its plan's API calls of the month: further calls are refused."),
};

export const NotificationPreferences = Type.Object(FIELDS, {
  description:
    'Which notification emails you receive, each kind on until you turn it off. They go to the owner and admins of the ' +
    'account whose address is verified; developers and viewers receive none, whatever they set here.',
});
export type NotificationPreferences = Static<typeof NotificationPreferences>;

export const NotificationChanges = Type.Partial(Type.Object(FIELDS), {
  additionalProperties: false,
  minProperties: 1,
  description: 'The kinds to turn on (true) or off (false); the kinds not named stay as they are.',
});
export type NotificationChanges = Static<typeof NotificationChanges>;

export const tags = ['notifications'];

export type PersonNotifications = Pick<Notifications, 'preferences' | 'setPreferences'>;
