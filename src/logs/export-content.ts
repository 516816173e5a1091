// What an export archive holds, as one text stream: a header naming the node and the range, the
// node's whole build history (what the control plane did to it, when, and why it failed), then
// its daemon output in the range. Builds are few and explain the log, so they are never cut by
// the range.
import type { LogRange } from './read-range.ts';
import type { Build, Node } from '../domain/nodes.ts';

export interface ExportHeader {
  taskId: string;
  node: Pick<Node, 'id' | 'name' | 'network' | 'status' | 'imageVersion'>;
  builds: Build[];
  range: LogRange;
  exportedAt: Date;
}

const oneLine = (s: string) => s.replace(/[\r\n]+/g, ' ');

export function formatExportHeader(h: ExportHeader): string {
  const lines = [
    '# RLN Cloud log export',
    `# node ${h.node.id} ${JSON.stringify(oneLine(h.node.name))} (${h.node.network}), image ${h.node.imageVersion}, status ${h.node.status}`,
    `# task ${h.taskId}, exported ${h.exportedAt.toISOString()}`,
    `# daemon output from ${h.range.from?.toISOString() ?? 'the oldest kept line'} to ${h.range.to?.toISOString() ?? 'the export'}`,
    `# build history (${h.builds.length}, oldest first):`,
    ...h.builds.map(formatBuild),
    '# daemon output (<time received> <stream> <line>):',
  ];
  return `${lines.join('\n')}\n`;
}

function formatBuild(b: Build): string {
  const version = b.previousImageVersion && b.previousImageVersion !== b.imageVersion ? `${b.previousImageVersion} -> ${b.imageVersion}` : b.imageVersion;
  const finished = b.finishedAt ? `finished ${b.finishedAt.toISOString()}` : 'not finished';
  const error = b.error ? `, error: ${oneLine(b.error)}` : '';
  return `# build #${b.buildNumber} ${b.action} ${version} ${b.status} started ${b.startedAt.toISOString()} ${finished}${error}`;
}

export async function* exportContent(header: ExportHeader, daemonOutput: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  yield Buffer.from(formatExportHeader(header));
  yield* daemonOutput;
}
