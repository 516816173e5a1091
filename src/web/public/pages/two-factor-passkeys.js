// The passkeys part of the two-factor page: the person's passkeys (renamed, removed with one of
// them), and adding one. A person whose account makes them enrol may add a passkey instead of an
// authenticator app, and goes on signed in. Where PUBLIC_URL is an IP address the page says why
// passkeys are not offered.
import { api, setCsrfToken } from '../api.js';
import { dialog, errorNotice, fill, h, notice, onSubmit, table, time } from '../dom.js';
import { addPasskey, passkeysSupported, usePasskey } from '../passkeys.js';

export function passkeysCard(status, { next }) {
  const card = h('section', { class: 'card narrow', dataset: { testid: 'passkeys' } }, h('h2', {}, 'Passkeys'));
  if (!status.passkeysAvailable) {
    card.append(
      notice(
        'info',
        h(
          'span',
          { dataset: { testid: 'passkeys-unavailable' } },
          'Passkeys need a host name: this service is reached at an IP address (its PUBLIC_URL), where browsers refuse them. ',
          'Ask its operator to give it a name (on a laptop, http://localhost works).',
        ),
      ),
    );
    return card;
  }
  if (!passkeysSupported()) {
    card.append(notice('info', 'This browser cannot use passkeys on this page: they need https (or http://localhost).'));
    return card;
  }
  const out = h('div', { class: 'form-out' });
  const list = h('div', {});
  card.append(
    h('p', { class: 'muted' }, 'A passkey signs you in with your fingerprint, face or security key instead of a password, and is a second factor after one.'),
    list,
    addForm(list, out, next),
    out,
  );
  void showList(list, out);
  return card;
}

async function showList(list, out) {
  let passkeys;
  try {
    passkeys = (await api('/api/me/passkeys')).data;
  } catch (err) {
    return fill(list, errorNotice(err));
  }
  if (passkeys.length === 0) return fill(list, h('p', { class: 'muted', dataset: { testid: 'no-passkeys' } }, 'No passkey yet.'));
  fill(
    list,
    table(
      'passkey-list',
      ['Name', 'Added', 'Last used', ''],
      passkeys.map((p) => ({
        attrs: { dataset: { passkeyId: p.id } },
        cells: [p.name, time(p.createdAt), p.lastUsedAt ? time(p.lastUsedAt) : 'never', actions(p, list, out)],
      })),
    ),
  );
}

function actions(passkey, list, out) {
  const rename = h('button', { type: 'button', class: 'btn btn-small btn-ghost' }, 'Rename');
  rename.addEventListener('click', async () => {
    await dialog({
      title: `Rename ${passkey.name}`,
      confirmLabel: 'Rename',
      fields: [{ name: 'name', label: 'New name' }],
      onConfirm: ({ name }) => api(`/api/me/passkeys/${passkey.id}`, { method: 'PATCH', body: { name } }),
    });
    void showList(list, out);
  });
  // Removing a factor takes a current one: any of the person's passkeys answers the challenge.
  const remove = h('button', { type: 'button', class: 'btn btn-small btn-danger-outline', dataset: { testid: 'remove-passkey' } }, 'Remove');
  remove.addEventListener('click', async () => {
    remove.disabled = true;
    fill(out);
    try {
      const answer = await usePasskey('/api/me/2fa/passkey-options');
      await api(`/api/me/passkeys/${passkey.id}`, { method: 'DELETE', body: { passkey: answer } });
      fill(out, notice('success', `${passkey.name} was removed.`));
      void showList(list, out);
    } catch (err) {
      fill(out, errorNotice(err));
      remove.disabled = false;
    }
  });
  return h('span', { class: 'row-actions' }, rename, ' ', remove);
}

function addForm(list, out, next) {
  const name = h('input', { id: 'passkey-name', name: 'name', maxlength: 64, placeholder: 'Laptop', autocomplete: 'off' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', dataset: { testid: 'add-passkey' } }, 'Add a passkey');
  const form = h('form', { class: 'stack' }, h('label', { class: 'field', for: 'passkey-name' }, h('span', {}, 'Name of the new passkey'), name), submit);
  onSubmit(form, submit, out, async () => {
    const added = await addPasskey(name.value.trim() || 'Passkey');
    // A session that had to enrol is a full one now: go where the person was going.
    if (added.csrfToken) {
      setCsrfToken(added.csrfToken);
      return location.assign(next());
    }
    fill(out, notice('success', h('span', { dataset: { testid: 'passkey-added' } }, `${added.name} was added.`)));
    name.value = '';
    void showList(list, out);
  });
  return form;
}
