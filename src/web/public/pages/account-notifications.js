// The Security section's notification emails: one checkbox per kind (GET/PUT /api/notifications),
// saved as soon as it changes. They are the person's own; only an account's owner and admins
// receive notifications, which the block says (the session does not carry the role).
import { api } from '../api.js';
import { errorNotice, fill, h, notice } from '../dom.js';

const KINDS = [
  ['nodeFailed', 'A node failed'],
  ['nodeStorageLost', 'A node lost its storage'],
  ['backupFailed', 'A backup failed'],
  ['apiCalls80', "The account used 80% of the month's API calls"],
  ['apiCalls100', "The account used all of the month's API calls"],
];

export function notificationsBlock() {
  const out = h('div', { class: 'form-out' });
  const list = h('div', { dataset: { testid: 'notifications' } });
  const block = h(
    'div',
    {},
    h('h3', {}, 'Email notifications'),
    h('p', { class: 'muted' }, "Emails about the account, sent to its owner and admins; your choices are yours alone and apply if your role changes."),
    out,
    list,
  );

  const toggle = (field, label, checked) => {
    const box = h('input', { id: `notify-${field}`, type: 'checkbox', checked, dataset: { testid: `notify-${field}` } });
    box.addEventListener('change', async () => {
      fill(out);
      box.disabled = true;
      try {
        await api('/api/notifications', { method: 'PUT', body: { [field]: box.checked } });
        fill(out, notice('success', `${label}: ${box.checked ? 'on' : 'off'}.`));
      } catch (err) {
        box.checked = !box.checked;
        fill(out, errorNotice(err));
      } finally {
        box.disabled = false;
      }
    });
    return h('label', { class: 'field-inline', for: `notify-${field}` }, box, ` ${label}`);
  };

  const show = async () => {
    let prefs;
    try {
      prefs = await api('/api/notifications');
    } catch (err) {
      return fill(list, errorNotice(err));
    }
    fill(list, h('div', { class: 'toggles' }, ...KINDS.map(([field, label]) => toggle(field, label, prefs[field]))));
  };
  return { block, load: show };
}
