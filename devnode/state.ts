// The wallet state devnode keeps in its storage directory, so a restart comes back initialised
// but locked, like RLN. Only a scrypt hash of the password is stored, never the password.
import { createHash, randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface WalletState {
  initialized: boolean;
  passwordSalt?: string;
  passwordHash?: string;
  /** Stable per node: derived from random bytes chosen at init. */
  pubkey?: string;
}

const WORDS = ['abandon', 'basket', 'cactus', 'dolphin', 'eagle', 'fabric', 'galaxy', 'harbor', 'island', 'jungle', 'kitten', 'lemon',
  'magnet', 'napkin', 'orbit', 'pepper', 'quartz', 'rocket', 'saddle', 'tunnel', 'umbrella', 'velvet', 'walnut', 'yellow'];

export class WalletStore {
  private readonly path: string;
  state: WalletState;
  /** In memory only: every process start begins locked. */
  unlocked = false;

  constructor(storageDir: string) {
    mkdirSync(storageDir, { recursive: true });
    this.path = join(storageDir, 'devnode-state.json');
    try {
      this.state = JSON.parse(readFileSync(this.path, 'utf8')) as WalletState;
    } catch {
      this.state = { initialized: false };
    }
  }

  init(password: string, mnemonic?: string): string {
    const words = mnemonic ?? Array.from({ length: 12 }, () => WORDS[randomBytes(1)[0]! % WORDS.length]).join(' ');
    const salt = randomBytes(16);
    this.state = {
      initialized: true,
      passwordSalt: salt.toString('hex'),
      passwordHash: hash(password, salt),
      pubkey: '02' + createHash('sha256').update(words).update(randomBytes(16)).digest('hex'),
    };
    this.save();
    return words;
  }

  checkPassword(password: string): boolean {
    if (!this.state.passwordSalt || !this.state.passwordHash) return false;
    const actual = Buffer.from(hash(password, Buffer.from(this.state.passwordSalt, 'hex')), 'hex');
    return timingSafeEqual(actual, Buffer.from(this.state.passwordHash, 'hex'));
  }

  changePassword(password: string) {
    const salt = randomBytes(16);
    this.state = { ...this.state, passwordSalt: salt.toString('hex'), passwordHash: hash(password, salt) };
    this.save();
  }

  private save() {
    // Written to a temporary file and renamed, so a crash never leaves half a state file.
    const tmp = `${this.path}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.state), { mode: 0o600 });
    renameSync(tmp, this.path);
  }
}

const hash = (password: string, salt: Buffer) => scryptSync(password, salt, 32).toString('hex');
