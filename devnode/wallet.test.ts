import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RlnError } from './errors.ts';
import { createLogger } from './log.ts';
import { StateFile, StateFileError } from './state.ts';
import { Wallet } from './wallet.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function storage(): string {
  const dir = mkdtempSync(join(tmpdir(), 'devnode-wallet-'));
  dirs.push(dir);
  return join(dir, 'storage');
}

const lines: string[] = [];
const log = createLogger((line) => lines.push(line));
const errorName = (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (e instanceof RlnError ? e.rlnName : String(e)));

describe('Wallet', () => {
  it('answers ChangingState to a request that arrives while another changes the state', async () => {
    const wallet = new Wallet(StateFile.open(storage()), log);
    await wallet.init('password1', undefined);
    const [first, second] = await Promise.all([errorName(wallet.unlock('password1')), errorName(wallet.unlock('password1'))]);
    expect([first, second]).toEqual(['ok', 'ChangingState']);
    expect(wallet.unlocked).toBe(true);
  });

  it('keeps a given mnemonic, so the node identity follows it', async () => {
    const words = 'ocean '.repeat(11) + 'planet';
    const a = new Wallet(StateFile.open(storage()), log);
    const b = new Wallet(StateFile.open(storage()), log);
    expect(await a.init('password-a', `  ${words} `)).toBe(words);
    await b.init('password-b', words);
    await a.unlock('password-a');
    await b.unlock('password-b');
    expect(a.requireUnlocked()).toEqual(b.requireUnlocked());
    expect(await errorName(new Wallet(StateFile.open(storage()), log).init('password', 'just three words'))).toBe('InvalidMnemonic');
  });

  it('refuses to start on a damaged state file instead of treating the node as new', () => {
    const dir = storage();
    const file = StateFile.open(dir);
    writeFileSync(file.path, '{"version":1,"initialized":true}');
    expect(() => new Wallet(file, log)).toThrow(StateFileError);
  });
});
