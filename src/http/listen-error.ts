// A listener that cannot bind says which setting to change: "listen EADDRINUSE 127.0.0.1:8080"
// alone leaves a newcomer guessing which of the three ports it was.

/** `err` from listen(), explained for the variable that chose the port; the code is kept. */
export function explainListenError(err: unknown, setting: string, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException)?.code;
  const why =
    code === 'EADDRINUSE' ? 'is already in use (another rln-cloud, or another program)'
    : code === 'EACCES' ? 'may not be opened by this user (ports below 1024 need privileges)'
    : code === 'EADDRNOTAVAIL' ? 'cannot be bound: the address is not one of this machine\'s (HOST)'
    : undefined;
  if (!why) return err;
  const explained = new Error(`${host}:${port} ${why}: stop what holds it, or set ${setting} to another port`) as NodeJS.ErrnoException;
  explained.code = code;
  return explained;
}
