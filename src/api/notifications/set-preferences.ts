// PUT /api/notifications: turns kinds of notification email on or off for the caller.
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import { NotificationChanges, NotificationPreferences, tags, type PersonNotifications } from './schemas.ts';

export function setNotificationPreferencesRoute(app: FastifyInstance, notifications: PersonNotifications) {
  app.put<{ Body: NotificationChanges }>(
    '/api/notifications',
    {
      config: { audit: { action: 'notifications.changed' } },
      schema: {
        operationId: 'setNotificationPreferences',
        summary: 'Turn notification emails on or off',
        description:
          'Sets the kinds named in the body and answers all of them. Every member may set their own; only owners and admins ' +
          'receive notifications. An unknown kind or a value that is not a boolean answers 400 `invalid_request`.',
        tags,
        body: NotificationChanges,
        response: { 200: NotificationPreferences, ...errorResponses },
      },
    },
    async (request) => notifications.setPreferences(userOf(request).id, request.body),
  );
}
