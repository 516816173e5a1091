// The VSS wire messages, decoded and encoded by protobufjs from vss.proto (kept beside this file,
// the reference server's file with the client-only messages left out).
import protobuf from 'protobufjs';
import { projectPath } from '../platform/paths.ts';

// Found from the project root (platform/paths.ts), not beside this module: the bundle in dist/
// and the container image (Dockerfile, scripts/service-image.sh) read it from src/vss/ too.
const root = protobuf.loadSync(projectPath('src', 'vss', 'vss.proto'));
export const VssMessages = {
  GetObjectRequest: root.lookupType('vss.GetObjectRequest'),
  GetObjectResponse: root.lookupType('vss.GetObjectResponse'),
  PutObjectRequest: root.lookupType('vss.PutObjectRequest'),
  PutObjectResponse: root.lookupType('vss.PutObjectResponse'),
  DeleteObjectRequest: root.lookupType('vss.DeleteObjectRequest'),
  DeleteObjectResponse: root.lookupType('vss.DeleteObjectResponse'),
  ListKeyVersionsRequest: root.lookupType('vss.ListKeyVersionsRequest'),
  ListKeyVersionsResponse: root.lookupType('vss.ListKeyVersionsResponse'),
  ErrorResponse: root.lookupType('vss.ErrorResponse'),
};

export const VssErrorCode = { UNKNOWN: 0, CONFLICT: 1, INVALID_REQUEST: 2, INTERNAL: 3, NO_SUCH_KEY: 4, AUTH: 5 } as const;
export type VssErrorCode = (typeof VssErrorCode)[keyof typeof VssErrorCode];

/** The reference server's statuses for each code (vss_service.rs). */
export const VSS_ERROR_STATUS: Record<VssErrorCode, number> = { 0: 500, 1: 409, 2: 400, 3: 500, 4: 404, 5: 401 };

export interface KeyValue {
  key: string;
  version: number;
  value: Uint8Array;
}

/** A decoded message as plain values: int64 as numbers, absent proto3 `optional` fields absent. */
export function decodeMessage<T>(type: protobuf.Type, body: Uint8Array): T {
  return type.toObject(type.decode(body), { longs: Number, defaults: true, bytes: Buffer }) as T;
}

export function encodeMessage(type: protobuf.Type, value: object): Buffer {
  return Buffer.from(type.encode(type.fromObject(value)).finish());
}

/** A VSS answer that is an ErrorResponse; thrown by the service, encoded by the routes. */
export class VssError extends Error {
  constructor(
    readonly code: VssErrorCode,
    message: string,
  ) {
    super(message);
  }
}
