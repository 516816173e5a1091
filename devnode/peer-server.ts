// The Lightning peer port. RLN speaks the Lightning protocol here; devnode has no peers, so it only
// holds the port (a second daemon cannot take it, and port checks see it in use) and closes every
// connection it accepts.
import net from 'node:net';

export function createPeerServer(): net.Server {
  return net.createServer((socket) => socket.destroy());
}
