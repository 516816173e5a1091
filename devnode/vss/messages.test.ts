// devnode's VSS descriptor (messages.ts) must be the service's vss.proto, field for field: the
// same names, numbers, types and rules, so what devnode encodes is what the server decodes.
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { VSS_DESCRIPTOR } from './messages.ts';

const shape = (root: protobuf.Root) => {
  const out: Record<string, unknown> = {};
  for (const nested of (root.lookup('vss') as protobuf.Namespace).nestedArray) {
    if (nested instanceof protobuf.Type) {
      out[nested.name] = Object.fromEntries(nested.fieldsArray.map((f) => [f.name, { id: f.id, type: f.type, repeated: f.repeated, optional: f.options?.proto3_optional === true }]));
    } else if (nested instanceof protobuf.Enum) {
      out[nested.name] = nested.values;
    }
  }
  return out;
};

describe("devnode's VSS messages", () => {
  it('match src/vss/vss.proto', () => {
    const service = protobuf.loadSync(new URL('../../src/vss/vss.proto', import.meta.url).pathname);
    expect(shape(protobuf.Root.fromJSON(VSS_DESCRIPTOR))).toEqual(shape(service));
  });
});
