// Group commit of the VSS server's common write: a single unconditional put (version -1, what
// RLN's nodes send for every state change) by the key bound to its store. A write goes to the
// database at once while fewer than `inFlight` statements of this kind run; writes arriving while
// they run wait and then go together, as one statement and so one commit (db/vss.ts
// writeVssObjectGroup). Alone, a write waits for nothing; under load, PostgreSQL makes one commit
// and this process one round trip for many writes, which is where a write's cost was
// (docs/BENCHMARKS.md, "VSS writes"). Every write is answered only after its group has committed.
import type { Queryable } from '../db/database.ts';
import { groupKey, writeVssObject, writeVssObjectGroup, type GroupedWrite } from '../db/vss.ts';

export interface GroupLimits {
  /** Group statements running at once (each holds a pooled connection). */
  inFlight: number;
  /** Writes in one group. */
  maxWrites: number;
  /** Value bytes in one group (a statement's size), past which the rest wait for the next. */
  maxBytes: number;
}

// Four of the pool's ten connections at most; groups of up to 100 writes or 4 MiB of values (a
// value past 256 KiB is in the blob store, and its row carries only its name).
export const DEFAULT_GROUP_LIMITS: GroupLimits = { inFlight: 4, maxWrites: 100, maxBytes: 4 * 1024 * 1024 };

type Written = { applied: boolean; oldBlobKey: string | null };

interface Waiting extends GroupedWrite {
  resolve(written: Written): void;
  reject(err: unknown): void;
}

export class VssWriteGroups {
  private waiting: Waiting[] = [];
  private running = 0;
  /** Groups committed and the writes in them (for tests and the benchmark). */
  readonly stats = { groups: 0, writes: 0 };

  constructor(
    private readonly db: Queryable,
    private readonly limits: GroupLimits = DEFAULT_GROUP_LIMITS,
    /** Told each statement's number of writes once it committed (a metric). */
    private readonly onCommitted: (writes: number) => void = () => {},
  ) {}

  write(w: GroupedWrite): Promise<Written> {
    return new Promise<Written>((resolve, reject) => {
      this.waiting.push({ ...w, resolve, reject });
      this.pump();
    });
  }

  private pump() {
    while (this.running < this.limits.inFlight && this.waiting.length > 0) {
      const group = this.take();
      this.running++;
      void this.commit(group).finally(() => {
        this.running--;
        this.pump();
      });
    }
  }

  /**
   * The next group: the oldest waiting writes, one per key (a later write of a key already in the
   * group waits for the next, so a node's writes of one key land in the order they came).
   */
  private take(): Waiting[] {
    const group: Waiting[] = [];
    const rest: Waiting[] = [];
    // Keys in the group or left waiting: a later write of one waits behind it.
    const seen = new Set<string>();
    let bytes = 0;
    for (const w of this.waiting) {
      const key = groupKey(w.nodeId, w.storeId, w.write.key);
      const size = w.write.value?.length ?? 0;
      const fits = group.length === 0 || (group.length < this.limits.maxWrites && bytes + size <= this.limits.maxBytes);
      if (fits && !seen.has(key)) {
        group.push(w);
        bytes += size;
      } else {
        rest.push(w);
      }
      seen.add(key);
    }
    this.waiting = rest;
    return group;
  }

  private async commit(group: Waiting[]) {
    if (group.length === 1) return this.alone(group[0]!);
    try {
      const written = await writeVssObjectGroup(this.db, group);
      this.committed(group.length);
      group.forEach((w, i) => w.resolve(written[i]!));
    } catch {
      // One write can fail the statement for all (a row PostgreSQL refuses): each goes again
      // alone, so only its own caller sees the error.
      await Promise.all(group.map((w) => this.alone(w)));
    }
  }

  private committed(writes: number) {
    this.stats.groups++;
    this.stats.writes += writes;
    this.onCommitted(writes);
  }

  private async alone(w: Waiting) {
    try {
      const written = await writeVssObject(this.db, w.nodeId, w.storeId, w.write, w.grant);
      this.committed(1);
      w.resolve(written);
    } catch (err) {
      w.reject(err);
    }
  }
}
