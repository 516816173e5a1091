// The VSS wire messages devnode sends, with the same library as the service (protobufjs), built
// from a descriptor here rather than src/vss/vss.proto: devnode is bundled into one file for its
// image (scripts/devnode-image.sh) and cannot read the service's .proto at run time. The
// descriptor is checked field by field against src/vss/vss.proto (messages.test.ts).
import protobuf from 'protobufjs';

const keyValue = { fields: { key: { type: 'string', id: 1 }, version: { type: 'int64', id: 2 }, value: { type: 'bytes', id: 3 } } };

export const VSS_DESCRIPTOR = {
  nested: {
    vss: {
      nested: {
        GetObjectRequest: { fields: { storeId: { type: 'string', id: 1 }, key: { type: 'string', id: 2 } } },
        GetObjectResponse: { fields: { value: { type: 'KeyValue', id: 2 } } },
        PutObjectRequest: {
          oneofs: { _globalVersion: { oneof: ['globalVersion'] } },
          fields: {
            storeId: { type: 'string', id: 1 },
            globalVersion: { type: 'int64', id: 2, options: { proto3_optional: true } },
            transactionItems: { rule: 'repeated', type: 'KeyValue', id: 3 },
            deleteItems: { rule: 'repeated', type: 'KeyValue', id: 4 },
          },
        },
        PutObjectResponse: { fields: {} },
        DeleteObjectRequest: { fields: { storeId: { type: 'string', id: 1 }, keyValue: { type: 'KeyValue', id: 2 } } },
        DeleteObjectResponse: { fields: {} },
        ListKeyVersionsRequest: {
          oneofs: {
            _keyPrefix: { oneof: ['keyPrefix'] },
            _pageSize: { oneof: ['pageSize'] },
            _pageToken: { oneof: ['pageToken'] },
          },
          fields: {
            storeId: { type: 'string', id: 1 },
            keyPrefix: { type: 'string', id: 2, options: { proto3_optional: true } },
            pageSize: { type: 'int32', id: 3, options: { proto3_optional: true } },
            pageToken: { type: 'string', id: 4, options: { proto3_optional: true } },
          },
        },
        ListKeyVersionsResponse: {
          oneofs: { _nextPageToken: { oneof: ['nextPageToken'] }, _globalVersion: { oneof: ['globalVersion'] } },
          fields: {
            keyVersions: { rule: 'repeated', type: 'KeyValue', id: 1 },
            nextPageToken: { type: 'string', id: 2, options: { proto3_optional: true } },
            globalVersion: { type: 'int64', id: 3, options: { proto3_optional: true } },
          },
        },
        ErrorResponse: { fields: { errorCode: { type: 'ErrorCode', id: 1 }, message: { type: 'string', id: 2 } } },
        ErrorCode: {
          values: {
            UNKNOWN: 0,
            CONFLICT_EXCEPTION: 1,
            INVALID_REQUEST_EXCEPTION: 2,
            INTERNAL_SERVER_EXCEPTION: 3,
            NO_SUCH_KEY_EXCEPTION: 4,
            AUTH_EXCEPTION: 5,
          },
        },
        KeyValue: keyValue,
      },
    },
  },
};

export const vssRoot = protobuf.Root.fromJSON(VSS_DESCRIPTOR);
export const vssType = (name: string) => vssRoot.lookupType(`vss.${name}`);

export const VSS_NO_SUCH_KEY = 4;
export const VSS_CONFLICT = 1;
