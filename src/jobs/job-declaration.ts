// What a durable job stores, declared once and shared by the code that enqueues it and the worker
// that runs it, so the two cannot disagree: its kind, how many attempts it gets, the schema of its
// payload (with a version, so stored payloads can be recognised after the code changes) and its
// singleton key (at most one pending job per key, so enqueueing twice does the work once).
import type { Static, TObject } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { NewJob } from '../db/jobs.ts';

export interface JobDeclaration<P> {
  readonly kind: string;
  readonly maxAttempts: number;
  /** The stored payload, checked against the schema; throws on one this code cannot handle. */
  parse(payload: unknown): P;
  /** The row that enqueues a job for `payload` (see insertJob / insertJobs). */
  newJob(payload: P): NewJob;
}

export interface JobDeclarationInput<S extends TObject> {
  kind: string;
  maxAttempts: number;
  /** Include `v: Type.Literal(n)`: a payload of another version is refused, not misread. */
  payload: S;
  singletonKey: (payload: Static<S>) => string;
}

export function declareJob<S extends TObject>(input: JobDeclarationInput<S>): JobDeclaration<Static<S>> {
  const { kind, maxAttempts, payload: schema, singletonKey } = input;
  return {
    kind,
    maxAttempts,
    parse(payload) {
      if (!Value.Check(schema, payload)) throw new Error(`unsupported ${kind} job payload ${JSON.stringify(payload)}`);
      return payload;
    },
    newJob: (payload) => ({ kind, payload, singletonKey: singletonKey(payload), maxAttempts }),
  };
}
