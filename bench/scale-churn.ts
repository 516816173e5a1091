// The fleet's work while bench/scale.ts measures reads: another account's nodes started and
// stopped over and over, from a process of its own, so the load generator's event loop (whose
// delays would count as the service's latency) does nothing but the reads. Arguments: the API's
// base URL, a token, the node ids. Runs until SIGTERM; prints how many calls it made.
const [api, token, ...nodes] = process.argv.slice(2);
let working = true;
let calls = 0;
process.once('SIGTERM', () => (working = false));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const post = async (path: string) => {
  const r = await fetch(`${api}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  await r.arrayBuffer();
  calls++;
};
while (working) {
  for (const id of nodes) await post(`/api/nodes/${id}/start`);
  await sleep(200);
  for (const id of nodes) await post(`/api/nodes/${id}/stop`);
  await sleep(200);
}
console.log(calls);
