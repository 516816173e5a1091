// A small closed-loop load generator: `concurrency` callers, each issuing the next request as soon
// as the last one answered, for a fixed duration. Returns throughput and latency percentiles.
export interface LoadResult {
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /**
   * Open loop only: how late the load generator itself sent its requests (p99, ms). Counted in the
   * latencies above; on a shared machine it tells the generator's stalls from the service's.
   */
  sendLateP99Ms?: number;
}

/** `opts.latencies`, when given, receives every latency too (to pool several runs' percentiles). */
export async function runLoad(fn: () => Promise<void>, opts: { concurrency: number; durationMs: number; latencies?: number[] }): Promise<LoadResult> {
  const latencies: number[] = [];
  const end = performance.now() + opts.durationMs;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await fn();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = performance.now() - started;
  opts.latencies?.push(...latencies);
  const pct = percentiles(latencies);
  return { requests: latencies.length, perSecond: (latencies.length / elapsed) * 1000, p50Ms: pct(0.5), p99Ms: pct(0.99) };
}

/** Several runs' results as one: their requests over their summed time, percentiles of all their latencies. */
export function pooled(results: LoadResult[], latencies: number[]): LoadResult {
  const requests = results.reduce((sum, r) => sum + r.requests, 0);
  const seconds = results.reduce((sum, r) => sum + (r.perSecond > 0 ? r.requests / r.perSecond : 0), 0);
  const pct = percentiles(latencies);
  return { requests, perSecond: seconds > 0 ? requests / seconds : 0, p50Ms: pct(0.5), p99Ms: pct(0.99) };
}

/**
 * An open-loop load generator: a request every 1/perSecond seconds whether or not the last ones
 * answered, as independent users send them. Each latency counts from when the request was due,
 * not when it was sent (when sent late), so a stalled server is not hidden by requests it kept
 * from being sent.
 */
export async function runAtRate(fn: () => Promise<void>, opts: { perSecond: number; durationMs: number }): Promise<LoadResult> {
  const latencies: number[] = [];
  const late: number[] = [];
  const intervalMs = 1000 / opts.perSecond;
  const count = Math.floor(opts.durationMs / intervalMs);
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const due = started + i * intervalMs;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    // A timer may fire up to a millisecond early (Node rounds its delay down): a request sent
    // before it was due counts from when it was sent.
    const sent = performance.now();
    late.push(sent - due);
    const from = Math.max(due, sent);
    inFlight.push(fn().then(() => void latencies.push(performance.now() - from)));
  }
  await Promise.all(inFlight);
  const elapsed = performance.now() - started;
  const pct = percentiles(latencies);
  return { requests: latencies.length, perSecond: (latencies.length / elapsed) * 1000, p50Ms: pct(0.5), p99Ms: pct(0.99), sendLateP99Ms: percentiles(late)(0.99) };
}

function percentiles(values: number[]) {
  values.sort((a, b) => a - b);
  return (p: number) => values[Math.min(values.length - 1, Math.floor(values.length * p))] ?? NaN;
}
