// Closes an HTTP(S) server the way a rolling update needs: stop accepting connections, let the
// requests in flight (and gateway streams) finish, close kept-alive connections as soon as they
// fall idle rather than waiting for the client to give up on them, and cut whatever is still open
// at the deadline. A bare server.close() would wait for every idle keep-alive connection (Node
// closes only those idle at the moment close() is called); closeAllConnections() would cut
// responses mid-stream.
import type { Server } from 'node:http';

/** How often connections that have just finished a response are looked for and closed. */
const IDLE_SWEEP_MS = 50;

/**
 * Resolves once the server is closed. `close` is how to close it (a Fastify instance closes its
 * own server, running its onClose hooks); by default the server itself. Returns whether it closed
 * cleanly (true) or connections had to be cut at the deadline (false).
 */
export async function drainServer(server: Server, deadline: number, close: () => Promise<unknown> = () => closeServer(server)): Promise<boolean> {
  if (!server.listening) return true;
  const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
  let cut = false;
  const force = setTimeout(() => {
    cut = true;
    server.closeAllConnections();
  }, Math.max(0, deadline - Date.now()));
  try {
    await close();
  } finally {
    clearInterval(sweep);
    clearTimeout(force);
  }
  return !cut;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
}
