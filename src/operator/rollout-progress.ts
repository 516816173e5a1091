// `rln-cloud release status` on a terminal: a progress bar redrawn in place until the rollout
// completes or pauses (or the operator presses Ctrl-C).
import type { ReleaseService } from '../releases/service.ts';

export type RolloutStatus = Awaited<ReturnType<ReleaseService['status']>>;

const REFRESH_MS = 500;
const BAR_WIDTH = 30;

export function renderRollout(s: RolloutStatus): string {
  const n = s.nodes;
  const done = n.succeeded + n.failed + n.skipped;
  const ratio = s.total === 0 ? 1 : done / s.total;
  const filled = Math.round(ratio * BAR_WIDTH);
  const bar = `${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}`;
  const counts = `${n.succeeded} upgraded, ${n.upgrading} upgrading, ${n.pending} waiting, ${n.failed} failed, ${n.skipped} skipped, ${n.deferred} paused nodes deferred`;
  const state = s.state === 'paused' ? `paused: ${s.pausedReason}` : s.state;
  return `${s.version} [${bar}] ${done}/${s.total} ${state} | ${counts}`;
}

export async function watchRollout(read: () => Promise<RolloutStatus>, out: NodeJS.WriteStream = process.stdout) {
  for (;;) {
    const status = await read();
    out.write(`\r\x1b[2K${renderRollout(status)}`);
    if (status.state !== 'running') {
      out.write('\n');
      return status;
    }
    await new Promise((resolve) => setTimeout(resolve, REFRESH_MS));
  }
}
