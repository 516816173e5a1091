// Routes whose body holds a password (unlock, init) parse JSON themselves: the default parser's
// error text quotes the body, and so would quote the password.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors.ts';

/** Registers `routes` in a scope of their own whose JSON parser never echoes the body. */
export function withPasswordBodies(app: FastifyInstance, routes: (scope: FastifyInstance) => void) {
  void app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
      try {
        done(null, JSON.parse(body as string));
      } catch {
        done(new AppError('invalid_json', 'the body is not valid JSON; send {"password": "..."}'), undefined);
      }
    });
    routes(scope);
  });
}
