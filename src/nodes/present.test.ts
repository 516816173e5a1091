// Node.port and Node.protocol are where invoke_url points: its explicit port, or its scheme's own.
import { describe, expect, it } from 'vitest';
import { buildId, nodeApiAddress } from './present.ts';

describe('nodeApiAddress', () => {
  it("answers invoke_url's port and scheme, the scheme's default port when the URL names none", () => {
    expect(nodeApiAddress('https://nodes.example.com')).toEqual({ nodeApiPort: 443, nodeApiProtocol: 'https' });
    expect(nodeApiAddress('http://nodes.example.com')).toEqual({ nodeApiPort: 80, nodeApiProtocol: 'http' });
    expect(nodeApiAddress('https://nodes.example.com:8443/rln')).toEqual({ nodeApiPort: 8443, nodeApiProtocol: 'https' });
    expect(nodeApiAddress('http://127.0.0.1:8081')).toEqual({ nodeApiPort: 8081, nodeApiProtocol: 'http' });
  });

  it("names a build by its node and number, which never change", () => {
    expect(buildId({ nodeId: 'a'.repeat(32), buildNumber: 7 })).toBe(`${'a'.repeat(32)}-7`);
  });
});
