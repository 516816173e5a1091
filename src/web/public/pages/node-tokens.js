// The node page's Node tokens card (issue #40): mint a Biscuit for this node (RLN's admin, read-only
// or custom role), shown once with a one-line curl, list the node's tokens and revoke one.
import { api } from '../api.js';
import { copyable, dialog, errorNotice, fill, h, notice, onSubmit, runAction, table, time } from '../dom.js';

const ROLES = {
  'read-only': "read-only — RLN's read-only routes",
  admin: 'admin — every route',
  custom: 'custom — the routes you list',
};

export function nodeTokensCard(nodeId) {
  const out = h('div', { class: 'form-out', dataset: { testid: 'node-token-out' } });
  const list = h('div', { class: 'table-wrap', dataset: { testid: 'node-tokens' } });
  const listOut = h('div', { class: 'form-out' });
  const role = h('select', { id: 'node-token-role', dataset: { testid: 'node-token-role' } }, Object.entries(ROLES).map(([value, label]) => h('option', { value }, label)));
  const routes = h('input', { id: 'node-token-routes', type: 'text', autocomplete: 'off', placeholder: '/nodeinfo, /listchannels', dataset: { testid: 'node-token-routes' } });
  const routesField = h('label', { class: 'field', for: 'node-token-routes', hidden: true }, h('span', {}, 'Routes (custom)'), routes);
  const expires = h('input', { id: 'node-token-expires', type: 'date', dataset: { testid: 'node-token-expires' } });
  role.addEventListener('change', () => (routesField.hidden = role.value !== 'custom'));
  const submit = h('button', { type: 'submit', class: 'btn btn-secondary' }, 'Mint token');
  const form = h(
    'form',
    { class: 'grid-form', novalidate: true },
    h('label', { class: 'field', for: 'node-token-role' }, h('span', {}, 'Role'), role),
    routesField,
    h('label', { class: 'field', for: 'node-token-expires' }, h('span', {}, 'Expires (default in 30 days)'), expires),
    h('div', { class: 'actions wide' }, submit),
    h('div', { class: 'wide' }, out),
  );

  onSubmit(form, submit, out, async () => {
    const body = { role: role.value };
    if (role.value === 'custom') body.routes = routes.value.split(/[\s,]+/).filter(Boolean);
    if (expires.value) body.expiresAt = new Date(`${expires.value}T23:59:59`).toISOString();
    const { data } = await api(`/api/nodes/${nodeId}/node-tokens`, { method: 'POST', body });
    const curl = `curl -H "Authorization: Bearer ${data.token}" ${data.nodeUrl}nodeinfo`;
    fill(
      out,
      notice('ok', h('strong', {}, `Node token (${data.role}) minted. `), 'Copy it now: it is shown only this once.'),
      copyable(data.token, { testId: 'node-token' }),
      h('p', { class: 'small muted' }, 'Try it:'),
      copyable(curl, { testId: 'node-token-curl' }),
    );
    await load();
  });

  const load = async () => {
    let tokens;
    try {
      tokens = (await api(`/api/nodes/${nodeId}/node-tokens`)).data;
    } catch (err) {
      return fill(list, errorNotice(err));
    }
    if (tokens.length === 0) return fill(list, h('p', { class: 'small muted' }, 'No node tokens yet.'));
    fill(
      list,
      table(
        'node-token-table',
        ['Role', 'Routes', 'Minted', 'Expires', 'Status', ''],
        tokens.map((t) => {
          const revoke = h('button', { type: 'button', class: 'btn btn-small btn-danger-outline' }, 'Revoke');
          revoke.addEventListener('click', async () => {
            const ok = await dialog({ title: 'Revoke this node token?', body: 'The gateway refuses it at once, and the node is told too.', confirmLabel: 'Revoke', danger: true });
            if (!ok) return;
            await runAction(revoke, listOut, () => api(`/api/nodes/${nodeId}/node-tokens/${encodeURIComponent(t.id)}`, { method: 'DELETE' }));
            await load();
          });
          const status = t.status === 'revoked' ? (t.revokedReason === 'minter_role' ? 'Revoked (minter role)' : 'Revoked') : t.status === 'expired' ? 'Expired' : 'Active';
          return {
            attrs: { dataset: { tokenId: t.id } },
            cells: [
              t.role,
              t.routes.join(' '),
              time(t.createdAt),
              time(t.expiresAt),
              h('span', { class: `badge ${t.status === 'valid' ? 'badge-ok' : t.status === 'revoked' ? 'badge-bad' : 'badge-idle'}` }, status),
              t.status === 'valid' ? revoke : null,
            ],
          };
        }),
      ),
    );
  };
  void load();

  return h(
    'section',
    { class: 'card', dataset: { testid: 'node-tokens-card' } },
    h('div', { class: 'card-head' }, h('h2', {}, 'Node tokens')),
    h(
      'div',
      { class: 'card-body stack' },
      h('p', { class: 'small muted' }, "RLN's own Biscuit tokens for this node, for clients written for RLN. The gateway checks each and passes it on; it stops when revoked, when it expires, or when whoever minted it loses the role for it."),
      form,
      listOut,
      list,
    ),
  );
}
