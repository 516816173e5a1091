// Answering a request before its body is read to its end (413 past a limit, 401 before an upload
// is read, a gateway refusal): the connection cannot carry another request, since the rest of the
// body is still on its way. So the answer says `Connection: close`, and the connection is closed
// gently: the answer and a FIN go out, and what the client still sends is read and dropped until
// it hangs up (or LINGER_MS pass). Closing at once, with unread bytes arriving, makes the kernel
// answer them with a reset, which can destroy the answer in the client's buffers before it reads
// it; the client then sees "connection reset" instead of the 413 (nginx's lingering_close).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How long a connection whose answer went out keeps reading what the client still sends. */
export const LINGER_MS = 5_000;

const lingering = new WeakSet<Socket>();

/**
 * When `req`'s body has not been read to its end: marks the answer `Connection: close` (if not yet
 * sent) and closes the connection gently once it is. Returns whether it did.
 */
export function closeAfterUnreadBody(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.complete) return false;
  if (!res.headersSent) res.setHeader('connection', 'close');
  // Whatever still arrives is read and dropped (node:http would stop reading a paused request).
  res.once('finish', () => req.resume());
  lingerOnClose(req.socket);
  return true;
}

function lingerOnClose(socket: Socket | null) {
  if (!socket || lingering.has(socket) || socket.destroyed) return;
  lingering.add(socket);
  // node:http closes a `Connection: close` connection with destroySoon() once the answer is
  // written: end it instead (a FIN), then destroy it when the client has hung up too.
  socket.destroySoon = function destroyAfterClient(this: Socket) {
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once('end', () => this.destroy());
    this.once('close', () => clearTimeout(timer));
    this.end();
    this.resume();
  };
}
