// API tokens: create (the secret is shown once, optionally scoped: read-only, some nodes, one
// listener), list with last use and scope, revoke.
import { api } from '../api.js';
import { copyButton, dialog, errorNotice, fill, h, notice, onSubmit, runAction, table, time } from '../dom.js';

export async function tokensPage(main, { setTitle }) {
  setTitle('API tokens');
  const list = h('div', { class: 'table-wrap' }, h('p', { class: 'loading' }, 'Loading tokens…'));
  const listOut = h('div', { class: 'form-out' });

  const refresh = async () => {
    let tokens;
    try {
      tokens = (await api('/api/tokens')).tokens;
    } catch (err) {
      fill(list, errorNotice(err));
      return;
    }
    if (tokens.length === 0) return fill(list, h('p', { class: 'muted' }, 'You have no API tokens yet.'));
    const state = (t) => (t.revokedAt ? ['Revoked', 'bad'] : t.expiresAt && Date.parse(t.expiresAt) < Date.now() ? ['Expired', 'idle'] : ['Active', 'ok']);
    const nodeName = (id) => nodes.find((n) => n.nodeId === id)?.name ?? `${id.slice(0, 8)}…`;
    fill(
      list,
      table(
        'tokens',
        ['Name', 'Scope', 'Created', 'Last used', 'Expires', 'Status', ''],
        tokens.map((t) => {
            const [label, tone] = state(t);
            const revoke = h('button', { type: 'button', class: 'btn btn-small btn-danger-outline' }, 'Revoke');
            revoke.addEventListener('click', async () => {
              const ok = await dialog({ title: `Revoke “${t.name}”?`, body: 'Programs using this token are refused from their next request.', confirmLabel: 'Revoke', danger: true });
              if (!ok) return;
              await runAction(revoke, listOut, () => api(`/api/tokens/${t.id}`, { method: 'DELETE' }));
              await refresh();
            });
            return {
              attrs: { dataset: { tokenId: t.id } },
              cells: [
                h('strong', {}, t.name),
                scopeText(t, nodeName),
                time(t.createdAt),
                t.lastUsedAt ? time(t.lastUsedAt) : 'never',
                t.expiresAt ? time(t.expiresAt) : 'never',
                h('span', { class: `badge badge-${tone}` }, label),
                label === 'Active' ? revoke : null,
              ],
            };
          }),
      ),
    );
  };

  // The nodes a token may be limited to; none ticked: every node.
  let nodes = [];
  const nodeChoices = h('div', { class: 'choices', id: 'token-nodes' });
  const loadNodes = async () => {
    try {
      nodes = (await api('/api/nodes')).nodes.filter((n) => n.status !== 'DESTROYED');
    } catch {
      nodes = [];
    }
    fill(
      nodeChoices,
      nodes.length === 0
        ? h('span', { class: 'muted' }, 'No nodes yet.')
        : nodes.map((n) => h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'token-node', value: n.nodeId }), ` ${n.name}`)),
    );
  };

  const out = h('div', { class: 'form-out', dataset: { testid: 'new-token' } });
  const name = h('input', { id: 'token-name', maxlength: 100, placeholder: 'e.g. billing-service', autocomplete: 'off' });
  const days = h('input', { id: 'token-days', type: 'number', min: 1, max: 3650, placeholder: 'never', inputmode: 'numeric' });
  const readOnly = h('input', { type: 'checkbox', id: 'token-read-only' });
  const access = h(
    'select',
    { id: 'token-access' },
    h('option', { value: 'all' }, 'Management API and nodes'),
    h('option', { value: 'api' }, 'Management API only'),
    h('option', { value: 'gateway' }, 'Nodes only (bearer gateway)'),
  );
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Create token');
  const form = h(
    'form',
    { class: 'grid-form', novalidate: true },
    h('label', { class: 'field', for: 'token-name' }, h('span', {}, 'Name'), name),
    h('label', { class: 'field', for: 'token-days' }, h('span', {}, 'Expires after (days)'), days),
    h('label', { class: 'field', for: 'token-access' }, h('span', {}, 'Usable on'), access),
    h('label', { class: 'check' }, readOnly, ' Read-only (can look, cannot change anything)'),
    h('fieldset', { class: 'wide field' }, h('legend', {}, 'Only these nodes (none ticked: every node)'), nodeChoices),
    h('div', { class: 'actions wide' }, submit),
    h('div', { class: 'wide' }, out),
  );
  onSubmit(form, submit, out, async () => {
    const body = { name: name.value };
    if (days.value) body.expiresInDays = Number(days.value);
    if (readOnly.checked) body.readOnly = true;
    if (access.value !== 'all') body.access = access.value;
    const picked = [...nodeChoices.querySelectorAll('input[name="token-node"]:checked')].map((c) => c.value);
    if (picked.length > 0) body.nodeIds = picked;
    const r = await api('/api/tokens', { method: 'POST', body });
    fill(
      out,
      notice(
        'warn',
        h('strong', {}, `Token “${r.data.name}” created. `),
        'Copy it now: it is shown only this once.',
        h('div', { class: 'copyable secret' }, h('code', { dataset: { testid: 'token-secret' } }, r.data.token), copyButton(r.data.token)),
      ),
    );
    form.reset();
    await refresh();
  });

  fill(
    main,
    h('div', { class: 'page-head' }, h('h1', {}, 'API tokens'), h('p', { class: 'muted' }, 'Tokens authenticate programs to the management API and to your nodes’ bearer endpoints.')),
    h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', {}, 'Create a token')), h('div', { class: 'card-body' }, form)),
    h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', {}, 'Your tokens')), h('div', { class: 'card-body' }, listOut, list)),
  );
  await loadNodes();
  await refresh();
}

/** A token's scope in a few words: "Full access", or e.g. "Read-only · nodes: a, b · API only". */
function scopeText(t, nodeName) {
  const parts = [];
  if (t.readOnly) parts.push('Read-only');
  if (t.nodeIds) parts.push(`nodes: ${t.nodeIds.map(nodeName).join(', ')}`);
  if (t.access === 'api') parts.push('API only');
  if (t.access === 'gateway') parts.push('nodes’ gateway only');
  return parts.length === 0 ? 'Full access' : parts.join(' · ');
}
