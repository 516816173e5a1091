// The answers of the sessions routes (web/sessions.ts presents them).
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { ID_PATTERN } from '../schemas.ts';

export const Session = Type.Object({
  id: Type.String(),
  device: Type.String({ description: 'Browser and operating system, read from the User-Agent the session signed in with.' }),
  address: Type.Union([Type.String(), Type.Null()], { description: 'The client address it signed in from (behind a trusted proxy, the real client).' }),
  createdAt: Type.String({ format: 'date-time' }),
  lastSeenAt: Type.String({ format: 'date-time', description: 'Updated at most once a minute.' }),
  current: Type.Boolean({ description: 'The session this request came with (never, with a token).' }),
});

export const SessionParams = Type.Object({ id: Type.String({ pattern: ID_PATTERN, description: 'Session id.' }) });
export type SessionParams = Static<typeof SessionParams>;

export const tags = ['sessions'];

/** A person's own web sessions, as the web UI keeps them (web/sessions.ts implements it). */
export interface PersonSessions {
  listSessions(userId: string, request: FastifyRequest): Promise<Static<typeof Session>[]>;
  /** Throws session_not_found for a session that is not this user's. */
  endSession(userId: string, sessionId: string): Promise<void>;
  /** Every session of the user but the request's own; returns how many ended. */
  endOtherSessions(userId: string, request: FastifyRequest): Promise<number>;
}
