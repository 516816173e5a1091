// The test-cluster recipe of docs/DEPLOY.md, run as written: its shell blocks (those marked
// `<!-- recipe: test-cluster ... -->`) are taken from the guide and typed, in order, into ONE bash
// session, as a person copying them would (variables a block sets are there for the next). Then,
// beside the guide's own commands: two replicas serve, the node runs as a pod, both gateways
// answered, the export downloaded, and while the upgrade and the rollback blocks run a client
// polling the API on fresh connections sees no failed request. The teardown block runs at the end
// (and before, against a run that did not finish).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeOnCluster, kubectl } from '../helpers/kubernetes.ts';
import { diagnostics, servicePods, SERVICE_NAMESPACE, NODES_NAMESPACE } from '../helpers/deployed-service.ts';
import { repoRoot } from '../helpers/service-process.ts';

export interface RecipeBlock {
  /** `step` for most; `upgrade`, `rollback` and `teardown` where the marker says so. */
  kind: string;
  code: string;
  /** Where the block starts in the guide (1-based), for messages. */
  line: number;
}

/** The blocks of one recipe, in the guide's order. */
export function recipeBlocks(markdown: string, recipe: string): RecipeBlock[] {
  const blocks: RecipeBlock[] = [];
  const marker = new RegExp(`<!-- recipe: ${recipe}(?: ([a-z-]+))? -->\\n\`\`\`sh\\n([\\s\\S]*?)\\n\`\`\``, 'g');
  for (const m of markdown.matchAll(marker)) {
    blocks.push({ kind: m[1] ?? 'step', code: m[2]!, line: markdown.slice(0, m.index).split('\n').length + 1 });
  }
  return blocks;
}

const DONE = '__RECIPE_BLOCK_DONE__';

/** One bash, fed block after block; a failing command ends it (set -e), with its output kept. */
class Session {
  private child: ChildProcess;
  private out = '';
  private exited: number | null = null;
  private waiters: Array<() => void> = [];

  constructor(env: NodeJS.ProcessEnv) {
    // Its own process group: what the recipe starts in the background (the forwarder, s3rver)
    // is stopped with it if the teardown block never runs.
    this.child = spawn('bash', ['--noprofile', '--norc'], { cwd: repoRoot, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const take = (d: Buffer) => {
      this.out += d.toString();
      for (const w of this.waiters.splice(0)) w();
    };
    this.child.stdout!.on('data', take);
    this.child.stderr!.on('data', take);
    this.child.on('exit', (code) => {
      this.exited = code ?? 1;
      for (const w of this.waiters.splice(0)) w();
    });
    this.child.stdin!.write('set -eo pipefail\n');
  }

  /** Runs `code` and answers what it printed (stdout and stderr together). */
  async run(code: string, timeoutMs: number): Promise<string> {
    const start = this.out.length;
    this.child.stdin!.write(`${code}\nprintf '\\n%s\\n' ${DONE}\n`);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = this.out.indexOf(`\n${DONE}\n`, start);
      if (end >= 0) {
        const printed = this.out.slice(start, end);
        this.out = this.out.slice(0, end) + this.out.slice(end + DONE.length + 2);
        return printed;
      }
      if (this.exited !== null) throw new Error(`the shell exited (${this.exited}); it printed:\n${this.out.slice(start).slice(-6000)}`);
      if (Date.now() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s; it printed:\n${this.out.slice(start).slice(-6000)}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 1_000);
      });
    }
  }

  /** The value of a variable the recipe set. */
  async value(name: string): Promise<string> {
    return (await this.run(`printf '%s' "\${${name}}"`, 10_000)).trim();
  }

  kill() {
    if (this.exited === null && this.child.pid) {
      try {
        process.kill(-this.child.pid, 'SIGKILL');
      } catch {}
    }
  }
}

/** A GET on a connection of its own: the status, or the connection error's code. */
function freshGet(url: string, token: string): Promise<string> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, headers: { authorization: `Bearer ${token}` }, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(String(res.statusCode)));
      res.on('error', (err: NodeJS.ErrnoException) => resolve(`error: ${err.code ?? err.message}`));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err: NodeJS.ErrnoException) => resolve(`error: ${err.code ?? err.message}`));
  });
}

/** Polls `url` until stopped; answers how many requests ended with each status. */
function startPolling(url: string, token: string) {
  const seen = new Map<string, number>();
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const r = await freshGet(url, token);
      seen.set(r, (seen.get(r) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await done;
      return Object.fromEntries(seen);
    },
  };
}

const guide = readFileSync(join(repoRoot, 'docs/DEPLOY.md'), 'utf8');
/** The image the guide's NetworkPolicy check runs on the test cluster: scripts/test-cluster.sh imports it. */
const CHECK_IMAGE = 'localhost/devnode:devnode-0.1.0';
const blocks = recipeBlocks(guide, 'test-cluster');

describe("the guide's test-cluster recipe (extraction)", () => {
  it('has the steps a person needs, in order, and a teardown', () => {
    const text = blocks.map((b) => b.code).join('\n');
    const order = [
      'scripts/test-cluster.sh up', 'scripts/service-image.sh --import', 'CREATE DATABASE', 'socat', 's3rver', 'openssl req',
      'kustomization.yaml', 'kubectl apply --server-side', 'rollout status', 'user create', 'token create',
      'waitFor=RUNNING', '/init"', '/unlock"', 'cert issue', '/logs', 'rollout undo', 'kubectl delete -k',
    ].map((s) => [s, text.indexOf(s)] as const);
    for (const [s, at] of order) expect(at, s).toBeGreaterThanOrEqual(0);
    expect(order.map(([, at]) => at)).toEqual([...order.map(([, at]) => at)].sort((a, b) => a - b));
    expect(blocks.map((b) => b.kind).filter((k) => k !== 'step')).toEqual(['upgrade', 'rollback', 'teardown']);
    // The wrapping overlay names the image as overlays/test-cluster left it (the images: trap).
    expect(text).toMatch(/- name: localhost\/rln-cloud\n\s+newTag: "1"/);
  });

  it('has a NetworkPolicy check whose image the test cluster holds when CHECK_IMAGE says so (it pulls nothing)', () => {
    const [check, ...more] = recipeBlocks(guide, 'netpol-check');
    expect(more).toEqual([]);
    expect(check!.code).toContain('--image="$CHECK_IMAGE"');
    expect(check!.code).not.toMatch(/curlimages/);
    // -i would read the lines pasted after it (and the test's shell) as the pod's input
    expect(check!.code).not.toMatch(/ -i /);
    expect(guide).toContain(`CHECK_IMAGE=${CHECK_IMAGE}`);
  });
});

// Once per CI run, in its PostgreSQL pass, like service-on-cluster.test.ts.
const describeRecipe = process.env.TEST_DATABASE_URL ? describeOnCluster : describe.skip;

describeRecipe('the guide (docs/DEPLOY.md) on the test cluster, command by command', () => {
  let deployDir: string;
  let env: NodeJS.ProcessEnv;
  const teardown = blocks.find((b) => b.kind === 'teardown')!;
  let shell: Session;
  const printed: string[] = [];
  const step = async (block: RecipeBlock, timeoutMs = 900_000) => {
    try {
      const out = await shell.run(block.code, timeoutMs);
      printed.push(out);
      return out;
    } catch (err) {
      throw new Error(`docs/DEPLOY.md block at line ${block.line}:\n${block.code}\n\n${(err as Error).message}\n\n${await diagnostics()}`);
    }
  };

  beforeAll(async () => {
    deployDir = mkdtempSync(join(tmpdir(), 'rln-guide-'));
    env = { ...process.env, DEPLOY_DIR: deployDir };
    delete env.NODE_OPTIONS; // vitest's loader is not the CLI's
    delete env.KUBECONFIG; // the recipe sets it
    const clean0 = new Session(env);
    const missing = (await clean0.run('for t in socat jq psql curl openssl kubectl; do command -v "$t" >/dev/null || printf "%s " "$t"; done', 30_000).finally(() => clean0.kill())).trim();
    if (missing) throw new Error(`docs/DEPLOY.md's recipe needs these on the PATH: ${missing}`);
    // A run that did not finish leaves its namespaces and database: the teardown, minus the
    // processes that died with it, first.
    await kubectl(['delete', 'namespace', SERVICE_NAMESPACE, NODES_NAMESPACE, '--ignore-not-found', '--timeout=5m']).catch(() => {});
    const clean = new Session(env);
    await clean.run(`psql -h 127.0.0.1 -U postgres -c 'DROP DATABASE IF EXISTS rln_cloud WITH (FORCE)' -c 'DROP ROLE IF EXISTS rln_cloud' || true`, 60_000).finally(() => clean.kill());
    shell = new Session(env);
  }, 600_000);

  afterAll(async () => {
    console.info(`what the recipe printed:\n${printed.join('\n---\n').slice(-20_000)}`);
    try {
      if (shell) await shell.run(teardown.code, 600_000).catch((err) => console.error(`teardown: ${err.message}`));
    } finally {
      shell?.kill();
      if (deployDir) rmSync(deployDir, { recursive: true, force: true });
    }
  }, 900_000);

  it('goes from nothing to two replicas serving, a node RUNNING, both gateways, an export, an upgrade and a rollback with no failed request', async () => {
    let polledUpgrade: Record<string, number> | undefined;
    let polledRollback: Record<string, number> | undefined;
    for (const block of blocks.filter((b) => b.kind !== 'teardown')) {
      if (block.kind === 'upgrade' || block.kind === 'rollback') {
        const [api, token] = [await shell.value('API'), await shell.value('TOKEN')];
        const polling = startPolling(`${api}/api/nodes`, token);
        let out: string;
        try {
          out = await step(block);
        } finally {
          const seen = await polling.stop();
          if (block.kind === 'upgrade') polledUpgrade = seen;
          else polledRollback = seen;
        }
        const image = block.kind === 'upgrade' ? 'localhost/rln-cloud:2' : 'localhost/rln-cloud:1';
        expect(out).toContain(image);
        const pods = JSON.parse(await kubectl(['-n', SERVICE_NAMESPACE, 'get', 'pods', '-l', 'app.kubernetes.io/name=rln-cloud', '-o', 'json'])).items
          .filter((p: any) => !p.metadata.deletionTimestamp);
        expect(pods.map((p: any) => p.spec.containers[0].image)).toEqual([image, image]);
      } else {
        await step(block);
      }
    }

    // Two replicas serve.
    expect((await servicePods()).filter((p) => p.ready && !p.deleting)).toHaveLength(2);
    // One at a time: the session runs one command after another.
    const [api, nodeApi, token, userId, nodeId] = [await shell.value('API'), await shell.value('NODE_API'), await shell.value('TOKEN'), await shell.value('USER_ID'), await shell.value('NODE_ID')];
    expect(nodeId).toMatch(/\S/);
    // The node runs as a pod and answers through the bearer gateway (unlocked by the recipe).
    const node = await (await fetch(`${api}/api/nodes/${nodeId}`, { headers: { authorization: `Bearer ${token}` } })).json();
    expect(node.data).toMatchObject({ status: 'RUNNING', locked: false });
    const pod = JSON.parse(await kubectl(['-n', NODES_NAMESPACE, 'get', 'pod', `rln-${nodeId}-0`, '-o', 'json']));
    expect(pod.status.phase).toBe('Running');
    const info = await fetch(`${nodeApi}/${userId}/${nodeId}/nodeinfo`, { headers: { authorization: `Bearer ${token}` } });
    expect(info.status).toBe(200);
    const { pubkey } = await info.json();
    // Both gateways printed the same node's nodeinfo; the export printed its output.
    const all = printed.join('\n');
    expect(all.split(`"pubkey": "${pubkey}"`).length - 1, 'nodeinfo through the bearer and the mutual-TLS gateway').toBe(2);
    expect(all, "the exported output").toMatch(/stdout .* INFO GET \/nodeinfo 200/);
    // Nothing failed while the replicas were replaced, twice.
    for (const [what, seen] of [['upgrade', polledUpgrade], ['rollback', polledRollback]] as const) {
      const total = Object.values(seen ?? {}).reduce((a, b) => a + b, 0);
      expect(total, `requests during the ${what}`).toBeGreaterThan(20);
      expect(seen, `statuses during the ${what}`).toEqual({ '200': total });
    }
    console.info(`requests polled during the upgrade and the rollback: ${JSON.stringify({ polledUpgrade, polledRollback })}`);
    // The guide's NetworkPolicy check runs here as written: the node's REST port and a replica's
    // metrics port answer a pod of another namespace, since this cluster enforces no policy (the node
    // with a 401: it runs RLN's authentication, and the probe sends no Biscuit).
    await shell.run(`CHECK_IMAGE=${CHECK_IMAGE}`, 10_000);
    const checked = await step(recipeBlocks(guide, 'netpol-check')[0]!, 300_000);
    expect(checked.match(/^(\d{3})$/gm), checked).toEqual([expect.stringMatching(/^(200|401|403)$/), '200']);
  }, 3_600_000);
});
