// Node logs collected once (issue #28), below the cluster: two replicas' collections on one
// database and one blob store, following a stand-in for the kubelet's pod log. Claims are shared
// out and handed over when a holder stops renewing (it died); the new holder resumes after the
// last stored line, a dead holder's late store is refused, and the export reads every line once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { insertNode } from '../../src/db/nodes.ts';
import { insertRelease } from '../../src/db/releases.ts';
import { LocalBlobStore } from '../../src/blobs/local-blob-store.ts';
import { NodeLogCollection } from '../../src/logs/node-log-collection.ts';
import { readCollectedLogs } from '../../src/logs/collected-logs.ts';
import { isNewLine, parseTimedLine, type TimedLine } from '../../src/logs/line-time.ts';
import { listNodeLogSegments } from '../../src/db/node-log-segments.ts';
import { SegmentJanitor } from '../../src/logs/segment-janitor.ts';
import type { LogsConfig } from '../../src/logs/settings.ts';
import type { NodeLogFollower } from '../../src/logs/node-log-follower.ts';
import { createLogger } from '../../src/logger.ts';
import { databaseLabel, insertOwnerUser, openMigratedTestDb } from '../helpers/database.ts';

const log = createLogger('silent');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the kubelet keeps of each node's pod: every line with its time, readable from a time on. */
class PodLogs {
  readonly lines = new Map<string, string[]>();
  private readonly listeners = new Set<(nodeId: string, raw: string) => void>();
  private clock = Date.parse('2026-03-01T10:00:00Z');

  print(nodeId: string, text: string) {
    // Nanosecond times as the kubelet writes them, trailing zeros cut.
    const raw = `${new Date(this.clock++).toISOString().replace(/\.?0+Z$/, 'Z')} ${text}`;
    (this.lines.get(nodeId) ?? this.lines.set(nodeId, []).get(nodeId)!).push(raw);
    for (const listener of this.listeners) listener(nodeId, raw);
  }

  /** A replica's follower: replays from `through` on, then passes new lines on, like a follow with sinceTime. */
  follower(): NodeLogFollower & { dead: boolean } {
    const follows = new Map<string, (raw: string) => void>();
    const pods = this;
    const follower = {
      dead: false,
      follow(nodeId: string, through: string | null, onLine: (line: TimedLine) => void) {
        let last = through;
        const deliver = (raw: string) => {
          const line = parseTimedLine(raw)!;
          if (follower.dead || !isNewLine(line.time, last)) return;
          last = line.time;
          onLine(line);
        };
        follows.set(nodeId, deliver);
        for (const raw of pods.lines.get(nodeId) ?? []) deliver(raw);
      },
      unfollow: (nodeId: string) => void follows.delete(nodeId),
      following: () => follows.size,
    };
    this.listeners.add((nodeId, raw) => follows.get(nodeId)?.(raw));
    return follower;
  }
}

describe(`node log claims and segments on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-node-logs-'));
  const blobs = new LocalBlobStore({ dataDir, publicUrl: 'http://127.0.0.1', area: 'node-logs' });
  const logs: LogsConfig = {
    maxFileBytes: 4096,
    maxFiles: 1,
    exportPartBytes: 2 ** 20,
    exportUrlTtlSeconds: 60,
    exportRetentionHours: 1,
    exportTimeoutMinutes: 1,
    followMaxNodes: undefined,
    segmentSeconds: 1,
    segmentMaxBytes: 2 ** 20,
    claimTtlSeconds: 1,
  };
  const pods = new PodLogs();
  const collection = (holder: string, follower = pods.follower()) =>
    Object.assign(new NodeLogCollection({ db, blobs, follower, holder, config: { dataDir, logs }, log }), { follower });
  const exported = async (nodeId: string) => {
    let text = '';
    for await (const chunk of readCollectedLogs(db, blobs, nodeId)) text += chunk.toString();
    return text.split('\n').filter(Boolean).map((l) => l.replace(/^\S+ stdout /, ''));
  };
  const [n1, n2] = ['nodelogs1', 'nodelogs2'];

  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb());
    await insertOwnerUser(db, 'lu', 'lu@example.com', 'starter');
    await insertRelease(db, 'v1');
    for (const [i, id] of [n1, n2].entries()) {
      await insertNode(db, { id, userId: 'lu', name: id, network: 'regtest', status: 'RUNNING', desiredState: 'running', imageVersion: 'v1', settings: {}, restPort: 32001 + 2 * i, peerPort: 32002 + 2 * i });
    }
  });
  afterAll(async () => {
    await close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('shares the nodes out, hands over a dead holder\'s node after its TTL without a gap or a double, and refuses the dead holder\'s late store', async () => {
    const a = collection('replica-a');
    const b = collection('replica-b');
    await a.claim(); // alone: takes every node
    expect(a.nodes().sort()).toEqual([n1, n2]);
    await b.claim(); // counted now, but nothing is free
    expect(b.nodes()).toEqual([]);
    await a.claim(); // over its share: hands the newest-taken back
    await b.claim();
    expect([a.nodes(), b.nodes()]).toEqual([[n1], [n2]]);
    expect([a.follower.following(), b.follower.following()]).toEqual([1, 1]);

    for (let i = 1; i <= 5; i++) pods.print(n1, `line ${i}`);
    await a.storeAll();
    for (let i = 6; i <= 8; i++) pods.print(n1, `line ${i}`); // buffered by a, never stored by it
    a.follower.dead = true; // a dies: no more renewals, no more lines
    for (let i = 9; i <= 10; i++) pods.print(n1, `line ${i}`); // printed while nobody follows
    expect(await exported(n1)).toEqual(['line 1', 'line 2', 'line 3', 'line 4', 'line 5']);

    await b.claim();
    expect(b.nodes()).toEqual([n2]); // a's claim has not expired yet
    await sleep(1_100);
    await b.claim();
    expect(b.nodes().sort()).toEqual([n1, n2]);
    pods.print(n1, 'line 11');
    await b.storeAll();
    // a's store after the hand-over (a stalled replica waking up) is refused and leaves nothing.
    await a.storeAll();
    expect(a.nodes()).toEqual([]);
    const lines = Array.from({ length: 11 }, (_, i) => `line ${i + 1}`);
    expect(await exported(n1)).toEqual(lines);
    const segments = await listNodeLogSegments(db, n1);
    expect(segments.map((s) => s.seq)).toEqual([1, 2]);
    expect(segments.map((s) => s.lines)).toEqual([5, 6]);

    // A clean stop stores what is buffered and hands every claim back at once.
    pods.print(n1, 'line 12');
    await b.stop();
    const c = collection('replica-c');
    await c.claim();
    expect(c.nodes().sort()).toEqual([n1, n2]);
    pods.print(n1, 'line 13');
    await c.stop();
    expect(await exported(n1)).toEqual([...lines, 'line 12', 'line 13']);
  });

  it('reads a time range, and keeps only the newest bytes per node', async () => {
    const all = await exported(n1);
    const times = (await listNodeLogSegments(db, n1)).map((s) => s.firstAt);
    let ranged = '';
    for await (const chunk of readCollectedLogs(db, blobs, n1, { from: times[1] })) ranged += chunk.toString();
    expect(ranged.split('\n').filter(Boolean).length).toBe(all.length - 5);

    // 4096 x 2 bytes kept per node: a chatty node loses its oldest segments, never its newest.
    const d = collection('replica-d');
    await d.claim();
    for (let s = 0; s < 6; s++) {
      for (let i = 0; i < 30; i++) pods.print(n2, `chatty ${s}.${i} ${'x'.repeat(40)}`);
      await d.storeAll();
    }
    await d.stop();
    const before = await listNodeLogSegments(db, n2);
    const swept = await new SegmentJanitor({ db, blobs, config: { dataDir, logs }, log }).sweep();
    const after = await listNodeLogSegments(db, n2);
    expect(swept).toBeGreaterThan(0);
    expect(after.at(-1)!.seq).toBe(before.at(-1)!.seq);
    expect(after.slice(1).reduce((n, s) => n + s.bytes, 0)).toBeLessThan(4096 * 2);
    expect((await exported(n2)).at(-1)).toMatch(/^chatty 5\.29 /);
    expect(await exported(n1)).toEqual(all); // the quiet node keeps everything
  });

  it('follows no more nodes than LOG_FOLLOW_MAX_NODES; the others take the rest', async () => {
    const bounded = new NodeLogCollection({ db, blobs, follower: pods.follower(), holder: 'replica-bounded', config: { dataDir, logs: { ...logs, followMaxNodes: 1 } }, log });
    await bounded.claim();
    expect(bounded.nodes()).toHaveLength(1);
    const other = collection('replica-other');
    await other.claim();
    expect([...bounded.nodes(), ...other.nodes()].sort()).toEqual([n1, n2]);
    await bounded.claim();
    expect(bounded.nodes()).toHaveLength(1);
    await bounded.stop();
    await other.stop();
  });

  it('lets a destroyed node go and sweeps its output', async () => {
    const e = collection('replica-e');
    await e.claim();
    expect(e.nodes().sort()).toEqual([n1, n2]);
    await db.query(`UPDATE nodes SET status = 'DESTROYED' WHERE id = $1`, [n2]);
    await e.claim();
    expect(e.nodes()).toEqual([n1]);
    expect(e.follower.following()).toBe(1);
    await e.stop();
    const kept = await exported(n1);
    await new SegmentJanitor({ db, blobs, config: { dataDir, logs }, log }).sweep();
    expect(await listNodeLogSegments(db, n2)).toEqual([]);
    expect(await exported(n1)).toEqual(kept);
  });
});
