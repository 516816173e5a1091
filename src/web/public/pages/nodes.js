// The nodes list with the create form.
import { api, nodeUrl } from '../api.js';
import { fill, h, lockBadge, notice, onSubmit, statusBadge, errorNotice, table, time } from '../dom.js';

const BUSY = new Set(['STARTING', 'IN_PROGRESS', 'DESTROYING']);

export async function nodesPage(main, { setTitle }) {
  setTitle('Nodes');
  const list = h('div', { class: 'card-body' }, h('p', { class: 'loading' }, 'Loading nodes…'));
  const showDestroyed = h('input', { type: 'checkbox', id: 'show-destroyed' });
  let lastNodes = [];
  let lastLatest;

  const render = (nodes, latest) => {
    lastNodes = nodes;
    lastLatest = latest;
    const visible = nodes.filter((n) => showDestroyed.checked || n.status !== 'DESTROYED');
    if (visible.length === 0) {
      fill(list, h('div', { class: 'empty-state' }, h('p', {}, nodes.length ? 'No nodes to show.' : 'You have no nodes yet. Create your first one below.')));
      return;
    }
    fill(
      list,
      table(
        'nodes-table',
        ['Name', 'Network', 'Status', 'Lock', 'Version', 'Created'],
        visible.map((n) => ({
          attrs: { dataset: { nodeId: n.nodeId } },
          cells: [
            [h('a', { href: nodeUrl(n.nodeId), class: 'strong' }, n.name), h('div', { class: 'muted mono small' }, n.nodeId)],
            h('span', { class: 'pill' }, n.network),
            statusBadge(n.status),
            n.status === 'DESTROYED' ? '—' : lockBadge(n.locked),
            [
              h('span', { class: 'mono' }, n.rln_commit_id),
              latest && n.rln_commit_id !== latest && n.status !== 'DESTROYED' ? h('span', { class: 'badge badge-info' }, 'Upgrade available') : null,
            ],
            time(n.createdAt),
          ],
        })),
      ),
    );
  };

  let timer;
  const refresh = async () => {
    clearTimeout(timer);
    try {
      const [{ nodes }, latest] = await Promise.all([api('/api/nodes'), api('/api/nodes/latest-rln-image').then((r) => r.data, () => undefined)]);
      render(nodes, latest);
      timer = setTimeout(refresh, nodes.some((n) => BUSY.has(n.status)) ? 1500 : 10_000);
    } catch (err) {
      fill(list, errorNotice(err));
    }
  };
  showDestroyed.addEventListener('change', () => render(lastNodes, lastLatest));

  fill(
    main,
    h('div', { class: 'page-head' }, h('h1', {}, 'Nodes'), h('p', { class: 'muted' }, 'Your hosted RGB Lightning Nodes.')),
    h(
      'section',
      { class: 'card' },
      h('div', { class: 'card-head' }, h('h2', {}, 'Your nodes'), h('label', { class: 'check' }, showDestroyed, ' Show destroyed')),
      list,
    ),
    createForm(refresh),
  );
  await refresh();
}

function createForm(onCreated) {
  const out = h('div', { class: 'form-out' });
  const name = h('input', { id: 'node-name', name: 'name', maxlength: 64, placeholder: 'e.g. shop-payments', autocomplete: 'off', required: true, 'aria-required': 'true' });
  const network = h('select', { id: 'node-network', name: 'network' }, h('option', { value: 'regtest' }, 'regtest'), h('option', { value: 'testnet' }, 'testnet'));
  const webhook = h('input', { id: 'node-webhook', name: 'webhookUrl', type: 'url', placeholder: 'https://example.com/hooks/rln (optional)', autocomplete: 'off' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Create node');
  // The API's validation is the one source of truth: send what was typed and show its answer.
  const form = h(
    'form',
    { class: 'grid-form', novalidate: true },
    h('label', { class: 'field', for: 'node-name' }, h('span', {}, 'Name ', h('span', { class: 'required', 'aria-hidden': 'true' }, '(required)')), name),
    h('label', { class: 'field', for: 'node-network' }, h('span', {}, 'Network'), network),
    h('label', { class: 'field wide', for: 'node-webhook' }, h('span', {}, 'Webhook URL'), webhook),
    h('div', { class: 'actions wide' }, submit),
    h('div', { class: 'wide' }, out),
  );
  onSubmit(form, submit, out, async () => {
    const body = { name: name.value, network: network.value };
    if (webhook.value.trim()) body.settings = { webhookUrl: webhook.value.trim() };
    const r = await api('/api/nodes', { method: 'POST', body });
    fill(out, notice('ok', r.message, ' ', h('a', { href: nodeUrl(r.data.nodeId) }, 'Open its page')));
    form.reset();
    await onCreated();
  });
  return h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', {}, 'Create a node')), h('div', { class: 'card-body' }, form));
}
