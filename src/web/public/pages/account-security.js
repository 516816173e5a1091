// The Account page's Security section: where the signed-in person is signed in (device, address,
// signed in, last seen), with an End button per session and one for all the others, and which
// notification emails they receive (account-notifications.js). Ending the
// current session is signing out, so its row has no button (the header's Sign out does that).
import { api } from '../api.js';
import { errorNotice, fill, h, runAction, table, time } from '../dom.js';
import { providersBlock } from './account-providers.js';
import { notificationsBlock } from './account-notifications.js';

export function securitySection() {
  const out = h('div', { class: 'form-out' });
  const list = h('div', { class: 'table-wrap' }, h('p', { class: 'loading' }, 'Loading sessions…'));
  const endOthers = h('button', { type: 'button', class: 'btn btn-small btn-danger-outline', dataset: { testid: 'end-other-sessions' } }, 'End all other sessions');

  const show = async () => {
    let sessions;
    try {
      sessions = (await api('/api/sessions')).sessions;
    } catch (err) {
      return fill(list, errorNotice(err));
    }
    endOthers.hidden = !sessions.some((s) => !s.current);
    fill(
      list,
      table(
        'sessions',
        ['Device', 'Address', 'Signed in', 'Last seen', ''],
        sessions.map((s) => ({
          attrs: { dataset: { sessionId: s.id } },
          cells: [
            h('strong', {}, s.device, s.current ? h('span', { class: 'muted' }, ' (this browser)') : null),
            s.address ?? '—',
            time(s.createdAt),
            time(s.lastSeenAt),
            s.current ? null : endButton(s),
          ],
        })),
      ),
    );
  };

  const endButton = (s) => {
    const button = h('button', { type: 'button', class: 'btn btn-small btn-danger-outline', 'aria-label': `End the session on ${s.device}` }, 'End');
    button.addEventListener('click', async () => {
      await runAction(button, out, () => api(`/api/sessions/${s.id}`, { method: 'DELETE' }));
      await show();
    });
    return button;
  };

  endOthers.addEventListener('click', async () => {
    await runAction(endOthers, out, () => api('/api/sessions', { method: 'DELETE' }));
    await show();
  });

  const providers = providersBlock();
  const notifications = notificationsBlock();
  const card = h(
    'section',
    { class: 'card', dataset: { testid: 'security' } },
    h('div', { class: 'card-head' }, h('h2', {}, 'Security'), endOthers),
    h('div', { class: 'card-body' }, h('p', { class: 'muted' }, 'Where you are signed in. A password change signs you out everywhere. ', h('a', { href: '/two-factor', dataset: { testid: 'two-factor-link' } }, 'Two-factor authentication')), out, list, providers.block, notifications.block),
  );
  return { card, load: () => Promise.all([show(), providers.load(), notifications.load()]) };
}
