// GET /api/notifications: which notification emails the caller receives (a person's own setting).
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import { NotificationPreferences, tags, type PersonNotifications } from './schemas.ts';

export function getNotificationPreferencesRoute(app: FastifyInstance, notifications: PersonNotifications) {
  app.get(
    '/api/notifications',
    {
      schema: {
        operationId: 'getNotificationPreferences',
        summary: 'Your notification emails',
        description: 'Which kinds of notification email you receive. Yours alone: no member sees or changes another\'s.',
        tags,
        response: { 200: NotificationPreferences, 401: errorResponses[401] },
      },
    },
    async (request) => notifications.preferences(userOf(request).id),
  );
}
