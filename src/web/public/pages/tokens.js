// API tokens: create (the secret is shown once), list with last use, revoke.
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
    fill(
      list,
      table(
        'tokens',
        ['Name', 'Created', 'Last used', 'Expires', 'Status', ''],
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

  const out = h('div', { class: 'form-out', dataset: { testid: 'new-token' } });
  const name = h('input', { id: 'token-name', maxlength: 100, placeholder: 'e.g. billing-service', autocomplete: 'off' });
  const days = h('input', { id: 'token-days', type: 'number', min: 1, max: 3650, placeholder: 'never', inputmode: 'numeric' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Create token');
  const form = h(
    'form',
    { class: 'grid-form', novalidate: true },
    h('label', { class: 'field', for: 'token-name' }, h('span', {}, 'Name'), name),
    h('label', { class: 'field', for: 'token-days' }, h('span', {}, 'Expires after (days)'), days),
    h('div', { class: 'actions wide' }, submit),
    h('div', { class: 'wide' }, out),
  );
  onSubmit(form, submit, out, async () => {
    const body = { name: name.value };
    if (days.value) body.expiresInDays = Number(days.value);
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
  await refresh();
}
