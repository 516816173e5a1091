// One command run in a container of a pod through the exec API: the official client's Exec, a
// websocket to the API server, which hands it on to the kubelet. What this adds to the client:
// the exit code read from the status channel, stdin sent with backpressure, stdout delivered with
// backpressure (the socket is paused while the reader is behind, so a slow reader holds up the
// command in the pod instead of filling the service's memory), and a connection that closes
// without an exit status, or stalls, turned into an error.
//
// Stdin has no end of its own here. The channel protocols a cluster before 1.30 speaks (v4 and
// older; the test cluster is 1.20) cannot close stdin alone: the client's only way to say EOF is
// to close the whole socket, and the exit status never arrives then (the client does exactly that
// when its stdin stream ends, so the stream handed to it below never ends). A command given stdin
// must therefore read a length it was told (`head -c <n>`); pod-storage-files.ts is built on that.
// v5.channel.k8s.io (1.30+) can close stdin alone, but one way that works on every cluster is
// simpler and is the one that gets tested.
import { Readable, Writable } from 'node:stream';
import type { Exec, V1Status } from '@kubernetes/client-node';
import { describeApiError } from './cluster.ts';

export interface PodContainer {
  namespace: string;
  pod: string;
  container: string;
}

export interface PodCommandOptions {
  /** What the command does, for error messages ("read backup.enc"). */
  what: string;
  /** Every byte the command reads, sent as they are; the command must stop reading after them. */
  stdin?: Uint8Array;
  /** Receives the command's stdout; answering false pauses it until resume(). */
  onStdout?: (chunk: Buffer) => boolean;
}

export interface CommandExit {
  code: number;
  /** The start of what the command wrote to stderr. */
  stderr: string;
}

export interface RunningCommand {
  /** The command's exit; rejects when it could not run or its connection ended without an exit status. */
  readonly exit: Promise<CommandExit>;
  pause(): void;
  resume(): void;
  /** Drops the connection (the command loses its stdin and stdout); `exit` rejects with `reason`. */
  abort(reason: Error): void;
}

/** The part of the websocket (the `ws` package, untyped in the client) used here. */
interface ExecSocket {
  readonly readyState: number;
  send(data: Buffer, done: (err?: Error) => void): void;
  pause(): void;
  resume(): void;
  terminate(): void;
  on(event: 'close', listener: () => void): void;
  on(event: 'error', listener: (err: Error) => void): void;
}

const STDIN_CHANNEL = 0;
const SOCKET_CLOSED = 3;
/** Stdin goes in frames of this size: a few in flight at a time, whatever the payload's size. */
const FRAME_BYTES = 256 * 1024;
const STDERR_KEPT = 4096;
/**
 * A command whose connection moves nothing for this long (while not paused by its reader) is
 * given up: an API server or kubelet that went away can leave a socket open without an answer.
 */
const IDLE_TIMEOUT_MS = 60_000;

export function runInPod(exec: Exec, target: PodContainer, command: string[], opts: PodCommandOptions): RunningCommand {
  let socket: ExecSocket | undefined;
  let paused = false;
  let settled = false;
  let stderr = '';
  let idle: NodeJS.Timeout | undefined;
  let settle!: (outcome: CommandExit | Error) => void;
  const exit = new Promise<CommandExit>((resolve, reject) => {
    settle = (outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(idle);
      socket?.terminate();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
  });
  const where = `in pod ${target.pod}`;
  const touch = () => {
    clearTimeout(idle);
    if (settled || paused) return;
    idle = setTimeout(() => settle(new Error(`nothing moved for ${IDLE_TIMEOUT_MS / 1000} s: gave up trying to ${opts.what} ${where}`)), IDLE_TIMEOUT_MS);
  };
  const handle: RunningCommand = {
    exit,
    pause() {
      paused = true;
      clearTimeout(idle);
      socket?.pause();
    },
    resume() {
      if (!paused) return;
      paused = false;
      touch();
      socket?.resume();
    },
    abort: (reason) => settle(reason),
  };

  // The client writes each message to these synchronously and ends them when the status arrives;
  // the end of the command is taken from the status callback, not from them.
  const onStdout = opts.onStdout;
  const stdout = onStdout && new Writable({
    write(chunk: Buffer, _encoding, done) {
      touch();
      if (!onStdout(chunk)) handle.pause();
      done();
    },
  });
  const stderrSink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      touch();
      if (stderr.length < STDERR_KEPT) stderr += chunk.toString('utf8');
      done();
    },
  });
  // Only asks for a stdin channel: never yields data and never ends (see the top of the file).
  const stdinChannel = opts.stdin ? new Readable({ read() {} }) : null;

  touch();
  exec
    .exec(target.namespace, target.pod, target.container, command, stdout ?? null, stderrSink, stdinChannel, false, (status) =>
      settle(exitOf(status as V1Status, () => stderr, `${opts.what} ${where}`)),
    )
    .then(
      (ws: ExecSocket) => {
        socket = ws;
        if (settled) return ws.terminate();
        if (paused) ws.pause();
        const closed = () => settle(new Error(`the connection closed before the command ended: could not ${opts.what} ${where}`));
        ws.on('close', closed);
        ws.on('error', (err) => settle(new Error(`could not ${opts.what} ${where}: ${err.message}`)));
        if (ws.readyState === SOCKET_CLOSED) return closed();
        if (opts.stdin) sendStdin(ws, opts.stdin, touch).catch(() => {}); // a broken socket also closes: settled there
      },
      (err: unknown) => settle(connectError(err, `${opts.what} ${where}`)),
    );
  return handle;
}

async function sendStdin(ws: ExecSocket, payload: Uint8Array, touch: () => void) {
  for (let at = 0; at < payload.byteLength; at += FRAME_BYTES) {
    const part = payload.subarray(at, at + FRAME_BYTES);
    const frame = Buffer.allocUnsafe(part.byteLength + 1);
    frame[0] = STDIN_CHANNEL;
    frame.set(part, 1);
    // The callback comes once the frame is handed to the socket: one frame queued at a time.
    await new Promise<void>((resolve, reject) => ws.send(frame, (err) => (err ? reject(err) : resolve())));
    touch();
  }
}

/** The status channel's last word: Success, a non-zero exit code, or why the command never ran. */
function exitOf(status: V1Status, stderr: () => string, what: string): CommandExit | Error {
  if (status.status === 'Success') return { code: 0, stderr: stderr() };
  const code = status.details?.causes?.find((cause) => cause.reason === 'ExitCode')?.message;
  if (status.reason === 'NonZeroExitCode' && code !== undefined && /^\d+$/.test(code)) return { code: Number(code), stderr: stderr() };
  return new Error(`could not ${what}: ${status.message ?? status.reason ?? 'the command failed to start'}`);
}

/** A refused websocket upgrade says only "Unexpected server response: <status>". */
function connectError(err: unknown, what: string): Error {
  const message = (err as { message?: unknown })?.message;
  const text = typeof message === 'string' ? message : String(err);
  const status = /server response: (\d{3})/.exec(text)?.[1];
  return describeApiError(status ? Object.assign(new Error(text), { statusCode: Number(status) }) : new Error(text), what);
}
