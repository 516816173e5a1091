import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { allocatePortPair, isPortFree } from './ports.ts';

describe('allocatePortPair', () => {
  it('takes the two lowest ports that are neither taken nor busy', async () => {
    const busy = new Set([30002]);
    const pair = await allocatePortPair({ from: 30000, to: 30010 }, new Set([30000]), async (p) => !busy.has(p));
    expect(pair).toEqual([30001, 30003]);
  });

  it('answers undefined when the range is exhausted', async () => {
    expect(await allocatePortPair({ from: 30000, to: 30001 }, new Set([30001]), async () => true)).toBeUndefined();
  });

  it('sees a port something listens on as busy', async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as net.AddressInfo;
    expect(await isPortFree(port)).toBe(false);
    await new Promise((r) => server.close(r));
    expect(await isPortFree(port)).toBe(true);
  });
});
