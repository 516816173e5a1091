// The node's lifecycle, following RLN's routes.rs: not initialized -> (init or restore) -> locked <-> unlocked.
// Operations check the state and mark it as changing in one synchronous step before their first
// await, so two concurrent requests cannot both pass a check; the loser gets ChangingState, as in RLN.
import { createHash } from 'node:crypto';
import { receiveAddress } from './address.ts';
import type { DaemonNetwork } from './args.ts';
import { restoreBackup } from './backup-restore.ts';
import { writeBackup } from './backup-write.ts';
import { RlnError } from './errors.ts';
import type { Logger } from './log.ts';
import { LocalNodeStore, MANAGER_KEY } from './node-store.ts';
import { NodeState, type VssBackupInfo } from './vss/continuous-state.ts';
import { generateMnemonic, MNEMONIC_RULE, normalizeMnemonic } from './mnemonic.ts';
import type { PersistedState, StateFile } from './state.ts';
import { openMnemonic, sealMnemonic } from './wallet-crypto.ts';

/** What an unlocked node knows about itself. */
export interface NodeIdentity {
  /** 33-byte compressed-key shape, 66 hex characters, derived from the mnemonic. */
  pubkey: string;
  onchainPubkey: string;
  /** Where the wallet's receive addresses come from (see address.ts). */
  addressSeed: Buffer;
}

const PASSWORD_MIN_BYTES = 8;

export class Wallet {
  private persisted: PersistedState;
  /** Set while unlocked; memory only, so every process start begins locked. */
  private identity: NodeIdentity | undefined;
  private changingState = false;
  /** The next receive address index: the node state (node-store.ts), read at unlock. */
  private addressesIssued = 0;

  constructor(
    private readonly file: StateFile,
    private readonly log: Logger,
    /** The unlocked node's state: local, and with --vss-url written to VSS too (vss/continuous-state.ts). */
    readonly nodeState: NodeState = new NodeState(new LocalNodeStore(file.storageDir), undefined, log),
  ) {
    this.persisted = file.load();
  }

  get initialized(): boolean {
    return this.persisted.initialized;
  }

  get unlocked(): boolean {
    return this.identity !== undefined;
  }

  /** RLN's check_unlocked: the guard of every endpoint that needs a running node. */
  requireUnlocked(): NodeIdentity {
    if (!this.identity) throw new RlnError('LockedNode');
    if (this.changingState) throw new RlnError('ChangingState');
    return this.identity;
  }

  /** RLN refuses to shut down in the middle of init, unlock or a password change. */
  requireNotChangingState(): void {
    if (this.changingState) throw new RlnError('ChangingState');
  }

  async init(password: string, mnemonic: string | undefined): Promise<string> {
    this.requireLocked('UnlockedNode');
    checkPasswordStrength(password);
    if (this.persisted.initialized) throw new RlnError('AlreadyInitialized');
    const words = mnemonic === undefined ? generateMnemonic() : normalizeMnemonic(mnemonic);
    if (words === undefined) throw new RlnError('InvalidMnemonic', MNEMONIC_RULE);
    return this.changeState(async () => {
      const sealed = await sealMnemonic(password, words);
      this.save({ version: 1, initialized: true, ...sealed });
      this.log.info(`wallet initialized (${mnemonic === undefined ? 'new' : 'given'} mnemonic)`);
      return words;
    });
  }

  async unlock(password: string): Promise<void> {
    this.requireLocked('AlreadyUnlocked');
    const persisted = this.persisted;
    if (!persisted.initialized) throw new RlnError('NotInitialized');
    await this.changeState(async () => {
      const mnemonic = await openMnemonic(persisted, password);
      if (mnemonic === undefined) {
        this.log.warn('unlock refused: wrong password');
        throw new RlnError('WrongPassword');
      }
      // Before the node counts as unlocked: a copy fenced out of its VSS store stays locked.
      const manager = await this.nodeState.open(mnemonic);
      this.addressesIssued = manager ? (JSON.parse(manager.toString('utf8')) as { addressesIssued: number }).addressesIssued : 0;
      this.identity = deriveIdentity(mnemonic);
      this.log.info(`node unlocked${this.nodeState.continuous ? ' (continuous state: VSS)' : ''}`);
    });
  }

  async lock(): Promise<void> {
    this.requireUnlocked();
    this.identity = undefined;
    await this.nodeState.close();
    this.log.info('node locked');
  }

  /** At a clean stop: an unlocked node frees its VSS fence. */
  async close(): Promise<void> {
    if (this.identity) await this.lock();
  }

  /** RLN's GET /vssbackupinfo (unlocked nodes). */
  vssBackupInfo(): Promise<VssBackupInfo> {
    this.requireUnlocked();
    return this.nodeState.backupInfo();
  }

  /** RLN's POST /vssclearfence: locked nodes, with the password (the fence's store key comes from the mnemonic). */
  async clearVssFence(password: string): Promise<void> {
    this.requireLocked('UnlockedNode');
    const persisted = this.persisted;
    if (!persisted.initialized) throw new RlnError('NotInitialized');
    await this.changeState(async () => {
      const mnemonic = await openMnemonic(persisted, password);
      if (mnemonic === undefined) throw new RlnError('WrongPassword');
      await this.nodeState.clearFence(mnemonic);
    });
  }

  async changePassword(oldPassword: string, newPassword: string): Promise<void> {
    this.requireLocked('UnlockedNode');
    checkPasswordStrength(newPassword);
    const persisted = this.persisted;
    if (!persisted.initialized) throw new RlnError('NotInitialized');
    await this.changeState(async () => {
      const mnemonic = await openMnemonic(persisted, oldPassword);
      if (mnemonic === undefined) throw new RlnError('WrongPassword');
      this.save({ version: 1, initialized: true, ...(await sealMnemonic(newPassword, mnemonic)) });
      this.log.info('password changed');
    });
  }

  /**
   * RLN's POST /backup: the whole storage directory, encrypted with the wallet's password, written
   * to one file. Locked nodes only, so nothing changes the storage while it is read.
   */
  async backup(backupPath: string, password: string): Promise<void> {
    this.requireLocked('UnlockedNode');
    const persisted = this.persisted;
    if (!persisted.initialized) throw new RlnError('NotInitialized');
    await this.changeState(async () => {
      // Checked before anything is written, as RLN does.
      if ((await openMnemonic(persisted, password)) === undefined) {
        this.log.warn('backup refused: wrong password');
        throw new RlnError('WrongPassword');
      }
      const started = performance.now();
      const { path, files, bytes } = await writeBackup(this.file.storageDir, backupPath, password, this.log);
      this.log.info(`backup written to ${path}: ${files} files, ${bytes} bytes, ${elapsed(started)}`);
    });
  }

  /**
   * RLN's POST /restore: replaces the storage with a backup's content. The node then is initialized
   * and still locked; the password unlocks it.
   */
  async restore(backupPath: string, password: string): Promise<void> {
    this.requireLocked('UnlockedNode');
    if (this.persisted.initialized) throw new RlnError('AlreadyInitialized');
    await this.changeState(async () => {
      const started = performance.now();
      try {
        const { path, files, bytes } = await restoreBackup(this.file.storageDir, backupPath, password, this.log);
        this.persisted = this.file.load();
        this.log.info(`wallet restored from ${path}: ${files} files, ${bytes} bytes, ${elapsed(started)}; locked`);
      } catch (err) {
        if (err instanceof RlnError) this.log.warn(`restore refused: ${err.message}`);
        throw err;
      }
    });
  }

  /**
   * RLN's POST /address: the wallet's next receive address. The index is node state: answered only
   * once it is stored (and, with continuous state, in VSS), so an address is never handed out twice.
   */
  async newAddress(network: DaemonNetwork): Promise<string> {
    const { addressSeed } = this.requireUnlocked();
    const index = this.addressesIssued++;
    await this.nodeState.write(MANAGER_KEY, Buffer.from(JSON.stringify({ addressesIssued: this.addressesIssued })));
    return receiveAddress(network, addressSeed, index);
  }

  /** RLN's check_locked; unlock reports an unlocked node as AlreadyUnlocked, the others as UnlockedNode. */
  private requireLocked(whenUnlocked: 'UnlockedNode' | 'AlreadyUnlocked'): void {
    if (this.identity) throw new RlnError(whenUnlocked);
    if (this.changingState) throw new RlnError('ChangingState');
  }

  private async changeState<T>(work: () => Promise<T>): Promise<T> {
    this.changingState = true;
    try {
      return await work();
    } finally {
      this.changingState = false;
    }
  }

  private save(state: PersistedState): void {
    this.file.save(state);
    this.persisted = state;
  }
}

/** RLN measures the password in bytes (Rust's str::len), so devnode does too. */
function checkPasswordStrength(password: string): void {
  if (Buffer.byteLength(password, 'utf8') < PASSWORD_MIN_BYTES) {
    throw new RlnError('InvalidPassword', `must have at least ${PASSWORD_MIN_BYTES} chars`);
  }
}

/**
 * Stand-in keys: hashes of the mnemonic shaped like compressed public keys. Deriving them from the
 * mnemonic (not from random bytes) keeps them stable across restarts and password changes, and a
 * node restored with the same mnemonic gets the same pubkey, as with RLN. They are not valid curve
 * points and sign nothing.
 */
export function deriveIdentity(mnemonic: string): NodeIdentity {
  const key = (purpose: string) => {
    const digest = createHash('sha256').update(`devnode/${purpose}\n${mnemonic}`).digest();
    return (digest[0]! & 1 ? '03' : '02') + digest.toString('hex');
  };
  return {
    pubkey: key('node-pubkey'),
    onchainPubkey: key('onchain-pubkey'),
    addressSeed: createHash('sha256').update(`devnode/address-seed\n${mnemonic}`).digest(),
  };
}

const elapsed = (started: number) => `${((performance.now() - started) / 1000).toFixed(2)}s`;
