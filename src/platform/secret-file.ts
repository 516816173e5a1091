// Writing a file of secrets (a keyring): mode 0600 from the first byte, and either atomically (a
// temporary file renamed over the old one, so a reader never sees half of it) or exclusively
// (EEXIST when the file exists, so replicas starting together on one directory create it once).
import { closeSync, openSync, renameSync, writeSync } from 'node:fs';

export function writeSecretFile(path: string, text: string, { exclusive }: { exclusive: boolean }) {
  const target = exclusive ? path : `${path}.${process.pid}.tmp`;
  const fd = openSync(target, exclusive ? 'wx' : 'w', 0o600);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  if (!exclusive) renameSync(target, path);
}
