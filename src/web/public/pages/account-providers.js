// The Security section's sign-in providers (OIDC_*): the person's linked OpenID providers with an
// Unlink button each, and a Link button for each other provider. Linking goes through the
// provider, which sends the browser back to the Account page.
import { api, config } from '../api.js';
import { errorNotice, fill, h, runAction } from '../dom.js';

export function providersBlock() {
  const out = h('div', { class: 'form-out' });
  const list = h('div', { dataset: { testid: 'sign-in-providers' } });
  const block = h('div', {}, h('h3', {}, 'Sign-in providers'), out, list);
  block.hidden = !(config.oidcProviders ?? []).length;

  const show = async () => {
    if (block.hidden) return;
    let answer;
    try {
      answer = await api('/api/session/oidc');
    } catch (err) {
      return fill(list, errorNotice(err));
    }
    const linked = new Set(answer.data.map((i) => i.provider));
    fill(
      list,
      h(
        'ul',
        { class: 'plain' },
        ...answer.available.map((p) => {
          const identity = answer.data.find((i) => i.provider === p.id);
          const button = h('button', { type: 'button', class: 'btn btn-small', dataset: { provider: p.id } }, linked.has(p.id) ? 'Unlink' : 'Link');
          button.addEventListener('click', async () => {
            if (linked.has(p.id)) {
              await runAction(button, out, () => api(`/api/session/oidc/${p.id}`, { method: 'DELETE' }));
              return show();
            }
            await runAction(button, out, async () => location.assign((await api(`/api/session/oidc/${p.id}/link`, { method: 'POST' })).redirectUrl));
          });
          return h('li', {}, h('strong', {}, p.label), identity ? h('span', { class: 'muted' }, ` linked${identity.email ? ` (${identity.email})` : ''} `) : ' ', button);
        }),
      ),
    );
  };
  return { block, load: show };
}
