// The Account page's last section: leaving the account (any member but the owner), handing it to an
// admin (the owner offers, the admin named accepts here too) and deleting it (the owner, with their
// password, or without one with a code or a passkey, and "destroy my nodes" when some still live).
// Each is confirmed in a dialog.
import { api, currentUser } from '../api.js';
import { dialog, errorNotice, fill, h, notice, runAction } from '../dom.js';
import { usePasskey } from '../passkeys.js';

/** GET that answers null for a 404 (no offer pending). */
async function offerOf() {
  try {
    return await api('/api/account/transfer');
  } catch (err) {
    if (err.status === 404) return null;
    throw err;
  }
}

const button = (label, testId, danger = true) => h('button', { type: 'button', class: `btn btn-small ${danger ? 'btn-danger-outline' : 'btn-primary'}`, dataset: { testid: testId } }, label);
const signedOut = () => window.location.assign('/sign-in');

export function ownershipSection() {
  const out = h('div', { class: 'form-out' });
  const body = h('div', { class: 'card-body' }, h('p', { class: 'loading' }, 'Loading…'));
  const card = h('section', { class: 'card', dataset: { testid: 'ownership' } }, h('div', { class: 'card-head' }, h('h2', {}, 'Leave, hand over or delete')), body);

  const load = async (members) => {
    const me = members.find((m) => m.userId === currentUser?.id);
    if (!me) return fill(body);
    let offer;
    try {
      offer = await offerOf();
    } catch (err) {
      return fill(body, errorNotice(err));
    }
    const parts = [out];
    if (offer) parts.push(offerNotice(me, offer, members));
    if (me.role === 'owner') parts.push(handOver(members, offer), deleteAccount());
    else parts.push(leave());
    fill(body, ...parts);
  };

  const offerNotice = (me, offer, members) => {
    const text = `The account is offered to ${offer.toEmail} until ${new Date(offer.expiresAt).toLocaleDateString()}.`;
    if (me.userId === offer.toUserId) {
      const accept = button('Accept ownership', 'accept-ownership', false);
      accept.addEventListener('click', async () => {
        const ok = await dialog({ title: 'Become the owner of this account?', body: 'The current owner becomes an admin. The account, its nodes and their URLs stay as they are.', confirmLabel: 'Accept' });
        if (!ok) return;
        if (await runAction(accept, out, () => api('/api/account/transfer/accept', { method: 'POST' }))) window.location.reload();
      });
      return notice('warn', h('strong', {}, 'You are offered this account. '), text, ' ', accept);
    }
    if (me.role === 'owner') {
      const withdraw = button('Withdraw', 'withdraw-offer');
      withdraw.addEventListener('click', async () => {
        if (await runAction(withdraw, out, () => api('/api/account/transfer', { method: 'DELETE' }))) await load(members);
      });
      return notice('warn', text, ' ', withdraw);
    }
    return notice('info', text);
  };

  const handOver = (members, offer) => {
    const admins = members.filter((m) => m.role === 'admin');
    if (admins.length === 0) return h('p', { class: 'muted' }, 'To hand the account over, make the person an admin first; they accept it here.');
    const select = h('select', { 'aria-label': 'Admin to hand the account to', dataset: { testid: 'hand-over-to' } }, admins.map((m) => h('option', { value: m.userId, selected: m.userId === offer?.toUserId }, m.email)));
    const offerButton = button('Offer the account', 'offer-ownership', false);
    offerButton.addEventListener('click', async () => {
      const ok = await dialog({ title: 'Offer the account?', body: 'Once they accept, they are the owner and you an admin. Until then nothing changes.', confirmLabel: 'Offer' });
      if (!ok) return;
      if (await runAction(offerButton, out, () => api('/api/account/transfer', { method: 'POST', body: { userId: select.value } }))) await load(members);
    });
    return h('div', { class: 'actions' }, h('span', {}, 'Hand the account to '), select, offerButton);
  };

  const deleteAccount = () => {
    const del = button('Delete the account', 'delete-account');
    del.addEventListener('click', async () => {
      // Someone who signs in with a provider or a passkey has no password: a current factor confirms
      // instead, or, with no factor either, a provider's sign-in of the last 10 minutes (the API says which is missing).
      const status = await api('/api/me/2fa').catch(() => ({ password: true }));
      const hasPassword = status.password;
      const hasFactor = status.totp || status.passkeys > 0;
      const confirmation = hasPassword
        ? { name: 'password', label: 'Your password', type: 'password', autocomplete: 'current-password' }
        : hasFactor
          ? { name: 'code', label: 'A code from your authenticator app or a recovery code; leave it empty to use a passkey', required: false, autocomplete: 'one-time-code' }
          : null;
      const factorOf = async (values) => {
        if (hasPassword) return { password: values.password };
        if (!hasFactor) return {};
        const code = (values.code ?? '').trim();
        if (!code) return { passkey: await usePasskey('/api/me/2fa/passkey-options') };
        return /^\d{6}$/.test(code.replace(/\s/g, '')) ? { code: code.replace(/\s/g, '') } : { recoveryCode: code };
      };
      await dialog({
        title: 'Delete this account?',
        body:
          'Every member, token, session and certificate goes at once. Nodes that still live must be destroyed: tick the box to destroy them. The audit trail and usage records stay with the operator.' +
          (hasPassword || hasFactor ? '' : ' You have no password or second factor: this works within 10 minutes of signing in with your provider.'),
        confirmLabel: 'Delete the account',
        danger: true,
        fields: [
          ...(confirmation ? [confirmation] : []),
          { name: 'destroyNodes', label: 'Also destroy my nodes', type: 'checkbox', required: false },
        ],
        onConfirm: async (values) => {
          await api('/api/account', { method: 'DELETE', body: { ...(await factorOf(values)), destroyNodes: values.destroyNodes === 'on' } });
          signedOut();
        },
      });
    });
    return h('div', { class: 'actions' }, del);
  };

  const leave = () => {
    const leaveButton = button('Leave this account', 'leave-account');
    leaveButton.addEventListener('click', async () => {
      const ok = await dialog({ title: 'Leave this account?', body: 'Your user is deleted: your API tokens, sessions and certificates stop working at once.', confirmLabel: 'Leave', danger: true });
      if (!ok) return;
      if (await runAction(leaveButton, out, () => api('/api/account/leave', { method: 'POST', body: { confirm: true } }))) signedOut();
    });
    return h('div', { class: 'actions' }, leaveButton);
  };

  return { card, load };
}
