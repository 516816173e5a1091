// The test cluster's volume provisioner for StorageClass rln-local (started by
// scripts/test-cluster.sh up, stopped by down; log in <state>/logs/provisioner.log).
//
// A bare cluster has no dynamic provisioning, so a volumeClaimTemplate's claim would stay Pending.
// Every 0.5 s this lists claims and volumes and:
//   - for each Pending claim of class rln-local that has no volume, creates a directory under
//     RLN_TC_VOLUMES (owned by uid/gid 1000, mode 0777, so a non-root pod can write) and a hostPath
//     PersistentVolume of the claim's size and access modes, pre-bound to the claim (claimRef with
//     its uid), so the PV controller binds the two at once;
//   - for each volume of the class that is Released or Failed (its claim was deleted), deletes the
//     volume and its directory. The volumes are made with reclaimPolicy Retain so that nothing else
//     acts on them: to the cluster's users the class behaves as reclaimPolicy Delete.
// Only Node built-ins: it talks to the apiserver over HTTPS with the admin token.
//
// Environment: RLN_TC_API_URL, RLN_TC_CA (CA file), RLN_TC_TOKEN_FILE, RLN_TC_VOLUMES.
import { chownSync, chmodSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { join, resolve, sep } from 'node:path';

const CLASS = 'rln-local';
const INTERVAL_MS = 500;
const OWNER_UID = 1000;
const OWNER_GID = 1000;
const LABEL = 'rln-cloud.test-cluster/provisioner';

const apiUrl = new URL(required('RLN_TC_API_URL'));
const ca = readFileSync(required('RLN_TC_CA'));
const token = readFileSync(required('RLN_TC_TOKEN_FILE'), 'utf8').trim();
const volumesDir = resolve(required('RLN_TC_VOLUMES'));

function required(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`provisioner: ${name} is not set`);
    process.exit(2);
  }
  return v;
}

const log = (msg) => console.log(`${new Date().toISOString()} ${msg}`);

function api(method, path, body) {
  return new Promise((resolvePromise, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        hostname: apiUrl.hostname,
        port: apiUrl.port,
        path,
        method,
        ca,
        timeout: 10_000,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(data === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => {
          let json;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolvePromise({ status: res.statusCode ?? 0, json, text });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
    req.on('error', reject);
    req.end(data);
  });
}

async function list(path) {
  const res = await api('GET', path);
  if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status} ${res.text.slice(0, 200)}`);
  return res.json.items ?? [];
}

// A volume's directory: always directly under volumesDir, named after the volume.
function volumeDir(pvName) {
  return join(volumesDir, pvName);
}
function isOurDir(path) {
  const p = resolve(path);
  return p.startsWith(volumesDir + sep) && !p.slice(volumesDir.length + 1).includes(sep);
}

const skipped = new Set(); // claims we cannot serve, logged once

async function provision(claim, existingPvNames) {
  const { namespace, name, uid } = claim.metadata;
  const pvName = `${CLASS}-${uid}`;
  if (existingPvNames.has(pvName)) return; // made on an earlier pass, binding under way
  const key = `${namespace}/${name}/${uid}`;
  const storage = claim.spec.resources?.requests?.storage;
  const volumeMode = claim.spec.volumeMode ?? 'Filesystem';
  if (!storage || volumeMode !== 'Filesystem' || claim.spec.dataSource) {
    if (!skipped.has(key)) {
      skipped.add(key);
      log(`cannot provision claim ${namespace}/${name}: needs a storage request, volumeMode Filesystem and no dataSource`);
    }
    return;
  }
  const dir = volumeDir(pvName);
  mkdirSync(dir, { recursive: true });
  chownSync(dir, OWNER_UID, OWNER_GID);
  chmodSync(dir, 0o777);
  const pv = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name: pvName,
      labels: { [LABEL]: CLASS },
      annotations: { 'pv.kubernetes.io/provisioned-by': 'rln-cloud-test-cluster' },
    },
    spec: {
      capacity: { storage },
      accessModes: claim.spec.accessModes ?? ['ReadWriteOnce'],
      volumeMode: 'Filesystem',
      storageClassName: CLASS,
      persistentVolumeReclaimPolicy: 'Retain',
      claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace, name, uid },
      hostPath: { path: dir, type: 'Directory' },
    },
  };
  const res = await api('POST', '/api/v1/persistentvolumes', pv);
  if (res.status === 201) log(`created ${pvName} (${storage}, ${dir}) for claim ${namespace}/${name}`);
  else if (res.status !== 409) throw new Error(`create ${pvName}: HTTP ${res.status} ${res.text.slice(0, 300)}`);
}

async function reclaim(pv) {
  const name = pv.metadata.name;
  const res = await api('DELETE', `/api/v1/persistentvolumes/${encodeURIComponent(name)}`);
  if (res.status !== 200 && res.status !== 202 && res.status !== 404) {
    throw new Error(`delete ${name}: HTTP ${res.status} ${res.text.slice(0, 300)}`);
  }
  const path = pv.spec.hostPath?.path;
  if (path && isOurDir(path)) rmSync(path, { recursive: true, force: true });
  const claim = pv.spec.claimRef ? `${pv.spec.claimRef.namespace}/${pv.spec.claimRef.name}` : 'none';
  log(`deleted ${pv.status?.phase} ${name} (claim ${claim})${path && isOurDir(path) ? ` and ${path}` : ''}`);
}

async function pass() {
  // resourceVersion=0: served from the apiserver's watch cache, not etcd
  const [claims, pvs] = await Promise.all([
    list('/api/v1/persistentvolumeclaims?resourceVersion=0'),
    list('/api/v1/persistentvolumes?resourceVersion=0'),
  ]);
  const pvNames = new Set(pvs.map((pv) => pv.metadata.name));
  for (const claim of claims) {
    if (claim.spec.storageClassName !== CLASS || claim.spec.volumeName) continue;
    if (claim.status?.phase !== 'Pending' || claim.metadata.deletionTimestamp) continue;
    await provision(claim, pvNames);
  }
  for (const pv of pvs) {
    if (pv.spec.storageClassName !== CLASS || pv.metadata.deletionTimestamp) continue;
    if (pv.status?.phase === 'Released' || pv.status?.phase === 'Failed') await reclaim(pv);
  }
}

let stopping = false;
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    stopping = true;
    log(`${sig}, exiting`);
    process.exit(0);
  });
}

log(`provisioner for StorageClass ${CLASS}: volumes in ${volumesDir}, apiserver ${apiUrl.origin}`);
mkdirSync(volumesDir, { recursive: true });
let lastError = '';
while (!stopping) {
  try {
    await pass();
    if (lastError) log('apiserver reachable again');
    lastError = '';
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    if (msg !== lastError) log(`error: ${msg}`); // the same error is logged once, not every pass
    lastError = msg;
  }
  await new Promise((r) => setTimeout(r, INTERVAL_MS));
}
