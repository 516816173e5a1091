// Resident memory of a process, for the benchmarks that start the service and watch it work.
import { readFileSync } from 'node:fs';

export const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The largest of ten samples 100 ms apart: the process at rest. */
export async function idleRssMb(pid: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 10; i++, await sleep(100)) samples.push(rssMb(pid));
  return Math.max(...samples);
}

/** Runs `work` while sampling `pid`'s RSS every 20 ms; answers its result, duration and peak growth over `idleMb`. */
export async function withPeakRss<T>(pid: number, idleMb: number, work: () => Promise<T>) {
  let peak = idleMb;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, rssMb(pid));
      await sleep(20);
    }
  })();
  const started = performance.now();
  try {
    const result = await work();
    return { result, seconds: (performance.now() - started) / 1000, rssGrowthMb: peak - idleMb };
  } finally {
    sampling = false;
    await sampler;
  }
}
