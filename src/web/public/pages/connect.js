// The connect page: the node's mutual-TLS and bearer endpoints, client credentials generated for
// this session and downloaded as files, a command line that works when pasted, and the issued
// certificates with revoke.
import { api, config, currentUser, nodeUrl, nodesListUrl } from '../api.js';
import { copyable, copyButton, dialog, download, errorNotice, fill, h, notice, runAction, table, time } from '../dom.js';
import { nodeNotFound } from './not-found.js';

const pemBlocks = (text) => String(text ?? '').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];

/** The generate-cert answer with the CA picked out of the chain. */
function credentialsFrom(body) {
  const c = body;
  const chain = String(c.certificateChain ?? '');
  const own = pemBlocks(c.certificate)[0]?.replace(/\s/g, '');
  // The chain ends at the CA that signed the client certificate and the gateway's server certificate.
  const ca = pemBlocks(chain).filter((b) => b.replace(/\s/g, '') !== own).at(-1);
  return { certificate: c.certificate, privateKey: c.privateKey, ca };
}

const listOf = (body) => body?.certificates ?? [];

export async function connectPage(main, { nodeId, setTitle }) {
  if (!/^[0-9a-f]{32}$/.test(nodeId)) return nodeNotFound(main, nodeId, setTitle);
  let node;
  try {
    node = (await api(`/api/nodes/${nodeId}`)).data;
  } catch (err) {
    if (err.status === 404) return nodeNotFound(main, nodeId, setTitle);
    throw err;
  }
  setTitle(`Connect to ${node.name}`);

  const mtlsUrl = `${config.userNodeUrl}/nodes/${currentUser.id}/${nodeId}/`;
  const short = nodeId.slice(0, 8);
  const files = { key: `rln-${short}.key`, cert: `rln-${short}.pem`, ca: 'rln-cloud-ca.pem' };
  const mtlsCommand = `curl --cert ${files.cert} --key ${files.key} --cacert ${files.ca} ${mtlsUrl}nodeinfo`;
  const bearerCommand = `curl -H "Authorization: Bearer $RLN_CLOUD_TOKEN" ${node.invoke_url}nodeinfo`;

  const credsOut = h('div', { class: 'form-out', dataset: { testid: 'credentials' } });
  const generate = h('button', { type: 'button', class: 'btn btn-primary' }, 'Generate and download credentials');
  generate.addEventListener('click', async () => {
    const result = await runAction(generate, credsOut, () => api(`/api/nodes/${nodeId}/generate-cert`, { method: 'POST' }));
    if (!result) return;
    const creds = credentialsFrom(result);
    const save = () => {
      download(files.key, creds.privateKey);
      download(files.cert, creds.certificate);
      if (creds.ca) download(files.ca, creds.ca);
    };
    save();
    const link = (name, text) => h('a', { href: '#', onclick: (e) => (e.preventDefault(), download(name, text)) }, name);
    fill(
      credsOut,
      notice(
        'ok',
        h('strong', {}, 'Credentials downloaded. '),
        'Keep the private key secret: the service does not keep a copy, so it cannot be shown again. Generate new credentials whenever you need them.',
      ),
      h('ul', { class: 'links' }, h('li', {}, link(files.key, creds.privateKey), ' — private key'), h('li', {}, link(files.cert, creds.certificate), ' — client certificate'), creds.ca ? h('li', {}, link(files.ca, creds.ca), ' — CA certificate (to trust the server)') : null),
    );
    await refreshCerts();
  });

  const certsBody = h('div', { class: 'table-wrap' }, h('p', { class: 'loading' }, 'Loading certificates…'));
  const certsOut = h('div', { class: 'form-out' });
  const refreshCerts = async () => {
    let certs;
    try {
      certs = listOf(await api(`/api/nodes/${nodeId}/certs`));
    } catch (err) {
      fill(certsBody, errorNotice(err));
      return;
    }
    if (certs.length === 0) {
      fill(certsBody, h('p', { class: 'muted' }, 'No certificates issued for this node yet.'));
      return;
    }
    fill(
      certsBody,
      table(
        'certs',
        ['Serial', 'Issued', 'Expires', 'Status', ''],
        certs.map((c) => {
            const revoked = c.status === 'revoked' || Boolean(c.revokedAt);
            const expiresAt = c.expiresAt;
            const expired = !revoked && (c.status === 'expired' || Date.parse(expiresAt) < Date.now());
            const revoke = h('button', { type: 'button', class: 'btn btn-small btn-danger-outline' }, 'Revoke');
            revoke.addEventListener('click', async () => {
              const ok = await dialog({
                title: 'Revoke this certificate?',
                body: `Certificate ${c.serial} stops working at once, also on open connections.`,
                confirmLabel: 'Revoke',
                danger: true,
              });
              if (!ok) return;
              await runAction(revoke, certsOut, () => api(`/api/nodes/${nodeId}/certs/${encodeURIComponent(c.serial)}`, { method: 'DELETE' }));
              await refreshCerts();
            });
            return {
              attrs: { dataset: { serial: c.serial } },
              cells: [
                h('code', { class: 'serial' }, c.serial),
                time(c.createdAt),
                time(expiresAt),
                h('span', { class: `badge ${revoked ? 'badge-bad' : expired ? 'badge-idle' : 'badge-ok'}` }, revoked ? 'Revoked' : expired ? 'Expired' : 'Active'),
                revoked || expired ? null : revoke,
              ],
            };
          }),
      ),
    );
  };

  const command = (text, testId) => h('div', { class: 'command' }, h('pre', {}, h('code', { dataset: { testid: testId } }, text)), copyButton(text));

  fill(
    main,
    h('nav', { class: 'breadcrumb', 'aria-label': 'Breadcrumb' }, h('a', { href: nodesListUrl() }, 'Nodes'), ' / ', h('a', { href: nodeUrl(nodeId) }, node.name), ' / ', h('span', {}, 'Connect')),
    h('div', { class: 'page-head' }, h('h1', {}, `Connect to ${node.name}`), h('p', { class: 'muted' }, "Reach the node's REST API with a client certificate or with an API token.")),
    node.status === 'RUNNING' ? null : notice('warn', `The node is ${node.status}: it answers only while RUNNING.`),
    h(
      'section',
      { class: 'card' },
      h('div', { class: 'card-head' }, h('h2', {}, 'Endpoints')),
      h(
        'div',
        { class: 'card-body' },
        h(
          'dl',
          { class: 'details' },
          h('dt', {}, 'Mutual TLS'),
          h('dd', {}, copyable(mtlsUrl, { testId: 'mtls-url' }), h('div', { class: 'small muted' }, 'Present the client certificate and key below.')),
          h('dt', {}, 'Bearer token'),
          h('dd', {}, copyable(node.invoke_url, { testId: 'bearer-url' }), h('div', { class: 'small muted' }, 'Send ', h('code', {}, 'Authorization: Bearer <token>'), ' with an ', h('a', { href: '/tokens' }, 'API token'), '.')),
        ),
      ),
    ),
    h(
      'section',
      { class: 'card' },
      h('div', { class: 'card-head' }, h('h2', {}, 'Client certificate')),
      h(
        'div',
        { class: 'card-body stack' },
        h('p', {}, 'Generates a private key and a short-lived certificate bound to you and this node, and downloads them with the CA certificate that signs the server.'),
        h('div', { class: 'actions' }, generate),
        credsOut,
        h('h3', {}, 'Example'),
        h('p', { class: 'small muted' }, 'Run it in the folder the files were downloaded to:'),
        command(mtlsCommand, 'mtls-command'),
        h('p', { class: 'small muted' }, 'Or with an API token:'),
        command(bearerCommand, 'bearer-command'),
      ),
    ),
    h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', {}, 'Issued certificates')), h('div', { class: 'card-body' }, certsOut, certsBody)),
  );
  await refreshCerts();
}
