// Reading JSON request bodies the way RLN's serde structs do: unknown fields are ignored, declared
// fields must have the right type, `null` counts as absent for optional fields. Error texts follow
// axum's JSON rejection texts so a client's logs look the same against devnode and RLN.
import type { IncomingMessage } from 'node:http';
import { RlnError } from './errors.ts';

const MAX_BODY_BYTES = 1024 * 1024;

export function readRequestBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      // Keep draining (and dropping) the rest, so the 413 answer can still be written.
      req.off('data', onData);
      req.resume();
      reject(new RlnError('PayloadTooLarge'));
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const rejection = (detail: string) =>
  new RlnError('InvalidRequest', `Failed to deserialize the JSON body into the target type: ${detail}`);

/** The typed fields of one JSON object body. */
export class BodyFields {
  private constructor(private readonly body: Readonly<Record<string, unknown>>) {}

  /** An empty body reads as `{}`, so a handler that needs a field reports it as missing. */
  static parse(raw: string): BodyFields {
    if (raw.trim() === '') return new BodyFields({});
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch (err) {
      throw new RlnError('InvalidRequest', `Failed to parse the request body as JSON: ${(err as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw rejection('invalid type: expected a JSON object');
    }
    return new BodyFields(parsed as Record<string, unknown>);
  }

  static of(body: Record<string, unknown>): BodyFields {
    return new BodyFields(body);
  }

  has(name: string): boolean {
    return this.body[name] !== undefined && this.body[name] !== null;
  }

  requiredString(name: string): string {
    const value = this.body[name];
    if (value === undefined) throw rejection(`missing field \`${name}\``);
    if (typeof value !== 'string') throw rejection(`${name}: invalid type, expected a string`);
    return value;
  }

  optionalString(name: string): string | undefined {
    const value = this.body[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') throw rejection(`${name}: invalid type, expected a string`);
    return value;
  }

  optionalBoolean(name: string): boolean | undefined {
    const value = this.body[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'boolean') throw rejection(`${name}: invalid type, expected a boolean`);
    return value;
  }

  optionalPort(name: string): number | undefined {
    const value = this.body[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 65535) {
      throw rejection(`${name}: invalid value, expected a u16`);
    }
    return value;
  }

  optionalStringList(name: string): string[] | undefined {
    const value = this.body[name];
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
      throw rejection(`${name}: invalid type, expected a sequence of strings`);
    }
    return value as string[];
  }

  optionalObject(name: string): BodyFields | undefined {
    const value = this.body[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'object' || Array.isArray(value)) throw rejection(`${name}: invalid type, expected a map`);
    return new BodyFields(value as Record<string, unknown>);
  }
}
