// Routes whose body may hold a password (unlock, init, backups, a create that restores) parse JSON
// themselves: the default parser's error text quotes the body, and so would quote the password.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors.ts';

/** Registers `routes` in a scope of their own whose JSON parser never echoes the body; `example` is what to send. */
export function withPasswordBodies(app: FastifyInstance, routes: (scope: FastifyInstance) => void, example = '{"password": "..."}') {
  void app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
      // As everywhere else, an empty body is no body: the route's schema says what is missing.
      if (body === '') return done(null, undefined);
      try {
        done(null, JSON.parse(body as string));
      } catch {
        done(new AppError('invalid_json', `the body is not valid JSON; send ${example}`), undefined);
      }
    });
    routes(scope);
  });
}
