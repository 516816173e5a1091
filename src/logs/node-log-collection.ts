// Node logs, collected once (issue #28): on Kubernetes each node's pod log is followed by exactly
// one replica, the holder of the node's log claim (db/node-log-claims.ts), and what it collects is
// stored as segments in the blob store with an index in the database, where every replica's
// exports read it (collected-logs.ts).
//
// Each replica, every third of the claim TTL: renews its claims (one it lost is unfollowed), takes
// claims nobody holds up to its fair share of the nodes (nodes / replicas collecting), and up to
// LOG_FOLLOW_MAX_NODES after a grace period that lets replicas under their share go first; one
// holding more than its share hands the excess back (after storing what it has), which is how a
// new replica gets its part. A replica that stops stores what it has and releases every claim;
// one that dies leaves its claims to expire after LOG_CLAIM_TTL_SECONDS.
//
// No gaps, no doubles: a segment is recorded in one transaction with the claim's resume point
// (`collected_through`, the kubelet's time of its last line), and only while this replica still
// holds the claim; whoever holds it next resumes right after that line. What a dead holder had
// not stored yet is read again from the kubelet, which keeps it while the pod exists.
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Database } from '../db/database.ts';
import { acquireLease, releaseLease } from '../db/leases.ts';
import { advanceNodeLogClaim, nodeLogCollectionShares, releaseNodeLogClaim, renewNodeLogClaims, takeNodeLogClaims } from '../db/node-log-claims.ts';
import { insertNodeLogSegment, nextNodeLogSegmentSeq } from '../db/node-log-segments.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import { BackgroundLoop } from '../jobs/background-loop.ts';
import type { Logger } from '../logger.ts';
import type { NodeLogFollower } from './node-log-follower.ts';
import { storedLine, type TimedLine } from './line-time.ts';
import type { LogsConfig } from './settings.ts';
import { segmentStagingDir } from './segment-janitor.ts';

export interface NodeLogCollectionOptions {
  db: Database;
  /** The `node-logs` area of the blob store. */
  blobs: BlobStore;
  follower: NodeLogFollower;
  /** This replica's name (the claims' holder). */
  holder: string;
  config: { dataDir: string; logs: LogsConfig };
  log: Logger;
}

interface Held {
  lines: string[];
  bytes: number;
  first?: Date;
  last?: Date;
  /** The kubelet's time of the last buffered line: the claim's resume point once stored. */
  through?: string;
  /** Stores run one after another per node, in order. */
  storing: Promise<void>;
}

const MAX_LINE_BYTES = 64 * 1024;
/** A node's unstored output is let go past this many segments' worth (see collect). */
const BUFFER_LIMIT = 8;
/** Segment blob keys: `<nodeId>/<seq, 12 digits>-<nonce>.log`, sorted by seq. */
export const segmentKey = (nodeId: string, seq: number, nonce: string) => `${nodeId}/${String(seq).padStart(12, '0')}-${nonce}.log`;

/** How many claims to take now: up to the fair share first, then, after a grace, up to the bound. */
export function claimsToTake(p: { held: number; nodes: number; collectors: number; max: number | undefined }): { share: number; fair: number; beyond: number } {
  const fair = Math.ceil(p.nodes / Math.max(1, p.collectors));
  const cap = p.max ?? Number.MAX_SAFE_INTEGER;
  const share = Math.max(0, Math.min(fair, cap) - p.held);
  const beyond = Math.max(0, cap - p.held - share);
  return { share, fair, beyond };
}

/**
 * How many claims to hand back: what is over the fair share, as far as other replicas are under
 * theirs. (A replica bounded by LOG_FOLLOW_MAX_NODES below its share stays under it: a node may
 * then move between replicas every few TTLs, each time without a gap.)
 */
export function claimsToHandBack(held: number, fair: number, others: number[]): number {
  const room = others.reduce((n, count) => n + Math.max(0, fair - count), 0);
  return Math.max(0, Math.min(held - fair, room));
}

export class NodeLogCollection {
  private readonly held = new Map<string, Held>();
  private readonly claimLoop: BackgroundLoop;
  private readonly storeLoop: BackgroundLoop;
  private readonly ttlMs: number;
  private readonly staging: string;

  constructor(private readonly opts: NodeLogCollectionOptions) {
    this.ttlMs = opts.config.logs.claimTtlSeconds * 1000;
    this.staging = segmentStagingDir(opts.config.dataDir);
    this.claimLoop = new BackgroundLoop({ name: 'node log claims', intervalMs: this.ttlMs / 3, log: opts.log, run: () => this.claim() });
    // A node that has just come up (an event this process committed: its build ran here) is claimed
    // at once rather than at the next round, up to a third of the TTL later: an export made right
    // after the first requests to a new node holds them. At most a round a second, however busy.
    let lastWake = 0;
    opts.db.commitSignals.on('node-events', () => {
      if (Date.now() - lastWake < 1000) return;
      lastWake = Date.now();
      this.claimLoop.wake();
    });
    this.storeLoop = new BackgroundLoop({
      name: 'node log segments',
      intervalMs: opts.config.logs.segmentSeconds * 1000,
      log: opts.log,
      run: () => this.storeAll(),
    });
  }

  start() {
    this.claimLoop.start();
    this.storeLoop.start();
  }

  /** Stores what was collected and hands every claim back, so other replicas resume at once. */
  async stop() {
    await this.claimLoop.stop();
    await this.storeLoop.stop();
    await Promise.all([...this.held.keys()].map((nodeId) => this.handBack(nodeId)));
    await releaseLease(this.opts.db, presenceLease(this.opts.holder), this.opts.holder).catch(() => {});
  }

  /** Nodes followed now. */
  nodes(): string[] {
    return [...this.held.keys()];
  }

  async claim() {
    const { db, holder, follower, log } = this.opts;
    // Being counted among the collectors even while holding nothing is how a new replica gets a share.
    await acquireLease(db, presenceLease(holder), holder, this.ttlMs);
    const renewed = new Set((await renewNodeLogClaims(db, holder, this.ttlMs)).map((c) => c.nodeId));
    for (const nodeId of [...this.held.keys()]) {
      if (!renewed.has(nodeId)) {
        log.info({ nodeId }, 'stopped following a node: it was destroyed, or its claim expired and another replica took it');
        this.drop(nodeId);
      }
    }
    const shares = await nodeLogCollectionShares(db, holder);
    const take = claimsToTake({ held: this.held.size, nodes: shares.nodes, collectors: shares.held.size, max: this.opts.config.logs.followMaxNodes });
    const taken = await takeNodeLogClaims(db, holder, this.ttlMs, take.share, 0);
    // Past the fair share only claims left for a while: replicas under theirs take them first.
    if (take.beyond > 0) taken.push(...(await takeNodeLogClaims(db, holder, this.ttlMs, take.beyond, 2 * this.ttlMs)));
    for (const claim of taken) {
      const held: Held = { lines: [], bytes: 0, storing: Promise.resolve() };
      this.held.set(claim.nodeId, held);
      follower.follow(claim.nodeId, claim.collectedThrough, (line) => this.collect(claim.nodeId, held, line));
    }
    if (taken.length > 0) log.info({ nodes: taken.length, following: this.held.size }, 'took node log claims');
    // More than the share while another replica has less (one joined): hand it the newest-taken.
    const handBack = claimsToHandBack(this.held.size, take.fair, [...shares.held].filter(([h]) => h !== holder).map(([, n]) => n));
    if (handBack > 0) {
      const handed = [...this.held.keys()].slice(-handBack);
      await Promise.all(handed.map((nodeId) => this.handBack(nodeId)));
      log.info({ nodes: handed.length, following: this.held.size }, 'handed node log claims to other replicas');
    }
  }

  private collect(nodeId: string, held: Held, line: TimedLine) {
    if (this.held.get(nodeId) !== held) return;
    const text = storedLine(line, MAX_LINE_BYTES);
    held.lines.push(text);
    held.bytes += Buffer.byteLength(text);
    held.first ??= line.at;
    held.last = line.at;
    held.through = line.time;
    if (held.bytes >= BUFFER_LIMIT * this.opts.config.logs.segmentMaxBytes) {
      // Storing has failed for a while (the blob store or the database is away): rather than
      // grow without bound, let the node go; whoever takes it next reads these lines again from
      // the kubelet, from after the last stored one.
      this.opts.log.warn({ nodeId, bytes: held.bytes }, 'collected node output cannot be stored; handing the node back');
      this.drop(nodeId);
      void releaseNodeLogClaim(this.opts.db, nodeId, this.opts.holder).catch(() => {});
    } else if (held.bytes >= this.opts.config.logs.segmentMaxBytes) {
      void this.store(nodeId, held);
    }
  }

  async storeAll() {
    await Promise.all([...this.held.entries()].map(([nodeId, held]) => this.store(nodeId, held)));
  }

  /** Stores the node's buffered lines as its next segment; queued behind a store under way. */
  private store(nodeId: string, held: Held): Promise<void> {
    held.storing = held.storing.then(() => this.storeNow(nodeId, held)).catch((err) => this.opts.log.warn({ nodeId, err }, 'storing collected node output failed; retrying'));
    return held.storing;
  }

  private async storeNow(nodeId: string, held: Held) {
    if (held.lines.length === 0 || this.held.get(nodeId) !== held) return;
    const { db, blobs, holder } = this.opts;
    const lines = held.lines.splice(0);
    const batch = { bytes: held.bytes, first: held.first!, last: held.last!, through: held.through! };
    held.bytes = 0;
    held.first = undefined;
    const seq = await nextNodeLogSegmentSeq(db, nodeId);
    const key = segmentKey(nodeId, seq, randomBytes(4).toString('hex'));
    let stored = false;
    try {
      await mkdir(this.staging, { recursive: true });
      const file = join(this.staging, `${nodeId}-${seq}-${randomBytes(4).toString('hex')}`);
      await writeFile(file, lines.join(''));
      await blobs.putFile(key, file, 'text/plain').finally(() => rm(file, { force: true }));
      stored = await db.transaction(async (tx) => {
        if (!(await advanceNodeLogClaim(tx, nodeId, holder, batch.through))) return false;
        await insertNodeLogSegment(tx, { nodeId, seq, blobKey: key, firstAt: batch.first, lastAt: batch.last, bytes: batch.bytes, lines: lines.length });
        return true;
      });
    } catch (err) {
      // Kept for the next store, in front of what came meanwhile; the blob may or may not be there.
      held.lines.unshift(...lines);
      held.bytes += batch.bytes;
      held.first = batch.first;
      await blobs.delete(key).catch(() => {});
      throw err;
    }
    if (!stored) {
      // The claim went to another replica, which resumes after the last segment recorded: ours is not one.
      await blobs.delete(key).catch(() => {});
      this.opts.log.warn({ nodeId }, 'lost a node log claim while storing; the new holder collects the same lines');
      this.drop(nodeId);
    }
  }

  /** Stores what was collected, then releases the claim so another replica resumes right after it. */
  private async handBack(nodeId: string) {
    const held = this.held.get(nodeId);
    if (!held) return;
    this.opts.follower.unfollow(nodeId);
    await this.store(nodeId, held);
    this.held.delete(nodeId);
    await releaseNodeLogClaim(this.opts.db, nodeId, this.opts.holder).catch((err) => this.opts.log.warn({ nodeId, err }, 'releasing a node log claim failed; it expires'));
  }

  private drop(nodeId: string) {
    this.opts.follower.unfollow(nodeId);
    this.held.delete(nodeId);
  }
}

const presenceLease = (holder: string) => `node-log-collector:${holder}`;
