import { spawn } from 'node:child_process';
import { prepareDataDir } from './bench/startup.ts';
import { freePort, randomNodePortRange } from './test/helpers/ports.ts';
const dataDir = await prepareDataDir(100);
const port = await freePort();
const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, API_PORT: String(port), NODE_API_PORT: String(await freePort()), MTLS_PORT: String(await freePort()), METRICS_PORT: String(await freePort()), NODE_PORT_RANGE: randomNodePortRange(), LOG_LEVEL: 'warn' };
delete env.DATABASE_URL;
const t0 = performance.now();
const child = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir=/tmp/prof', '--cpu-prof-interval=200', '--liftoff-only', '--max-semi-space-size=4', 'scripts/start.mjs'], { env, stdio: 'inherit', cwd: '/work/main' });
for (;;) { try { if ((await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200) break; } catch {} await new Promise(r => setTimeout(r, 10)); }
console.log('healthy ms', Math.round(performance.now() - t0));
child.kill('SIGTERM');
await new Promise(r => child.once('exit', r));
