// Two-factor authentication: enrol an authenticator app (a QR code, confirmed with a first code),
// the ten recovery codes shown once, turning it off with a current code, passkeys
// (two-factor-passkeys.js), and the owner's rule that every member has one. A person whose account requires two factors lands here after their
// password and can reach nothing else until they enrol.
import { api, setCsrfToken, nodesListUrl } from '../api.js';
import { errorNotice, fill, h, notice, onSubmit } from '../dom.js';
import { passkeysCard } from './two-factor-passkeys.js';

function nextPath() {
  const next = new URLSearchParams(location.search).get('next');
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/sign-in') ? next : nodesListUrl();
}

export async function twoFactorPage(main, { setTitle }) {
  setTitle('Two-factor authentication');
  let status;
  try {
    status = await api('/api/me/2fa', { quietAuth: true });
  } catch (err) {
    if (err.status === 401) return location.replace('/sign-in?next=/two-factor');
    return fill(main, errorNotice(err));
  }
  setCsrfToken(status.csrfToken);
  const card = h('section', { class: 'card narrow', dataset: { testid: 'two-factor' } });
  const hasFactor = status.totp || status.passkeys > 0;
  fill(main, card, passkeysCard(status, { next: nextPath }), status.owner && hasFactor ? h('section', { class: 'card narrow' }, ruleForm(status)) : null);
  if (status.totp) showEnrolled(card, status);
  else showEnrol(card, status);
}

function showEnrol(card, status) {
  const out = h('div', { class: 'form-out' });
  const start = h('button', { type: 'button', class: 'btn btn-primary', dataset: { testid: 'start-totp' } }, 'Set up an authenticator app');
  start.addEventListener('click', async () => {
    start.disabled = true;
    try {
      showQr(card, await api('/api/me/2fa/totp', { method: 'POST' }));
    } catch (err) {
      fill(out, errorNotice(err));
      start.disabled = false;
    }
  });
  fill(
    card,
    h('h1', {}, 'Two-factor authentication'),
    status.requiredByAccount
      ? notice('info', 'Your account requires two-factor authentication. Set up an authenticator app, or add a passkey below, to continue.')
      : h('p', { class: 'muted' }, 'Protect your sign-in with a code from an authenticator app (Google Authenticator, 1Password, Aegis, …).'),
    out,
    start,
  );
}

function showQr(card, enrolment) {
  const out = h('div', { class: 'form-out' });
  const code = h('input', { id: 'totp-code', name: 'code', inputmode: 'numeric', autocomplete: 'one-time-code', required: true });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Confirm');
  const form = h('form', { class: 'stack' }, h('label', { class: 'field', for: 'totp-code' }, h('span', {}, 'The 6-digit code it shows'), code), out, submit);
  onSubmit(form, submit, out, async () => {
    const confirmed = await api('/api/me/2fa/totp/confirm', { method: 'POST', body: { code: code.value.replace(/\s/g, '') } });
    if (confirmed.csrfToken) setCsrfToken(confirmed.csrfToken);
    showRecoveryCodes(card, confirmed.recoveryCodes);
  });
  fill(
    card,
    h('h1', {}, 'Scan this QR code'),
    h('p', { class: 'muted' }, 'Scan it with your authenticator app, then type the code it shows.'),
    h('img', { src: `data:image/svg+xml;base64,${btoa(enrolment.qrCodeSvg)}`, alt: 'QR code of your authenticator secret', width: 200, height: 200, dataset: { testid: 'totp-qr' } }),
    h('p', { class: 'small' }, 'Cannot scan? Type this key: ', h('code', { dataset: { testid: 'totp-secret' } }, enrolment.secret)),
    form,
  );
  code.focus();
}

function showRecoveryCodes(card, codes) {
  fill(
    card,
    h('h1', {}, 'Save your recovery codes'),
    notice('success', 'Two-factor authentication is on.'),
    h('p', {}, 'Each code signs you in once if you lose your phone. They are shown only now: print them or keep them in a password manager.'),
    h('ul', { class: 'recovery-codes', dataset: { testid: 'recovery-codes' } }, codes.map((c) => h('li', {}, h('code', {}, c)))),
    h('a', { class: 'btn btn-primary', href: nextPath(), dataset: { testid: 'two-factor-done' } }, 'I saved them, continue'),
  );
}

function showEnrolled(card, status) {
  const out = h('div', { class: 'form-out' });
  const code = h('input', { id: 'off-code', name: 'code', autocomplete: 'one-time-code', required: true });
  const submit = h('button', { type: 'submit', class: 'btn btn-danger-outline' }, 'Turn off');
  const off = h('form', { class: 'stack', dataset: { testid: 'turn-off-totp' } }, h('label', { class: 'field', for: 'off-code' }, h('span', {}, 'A current code, or a recovery code'), code), out, submit);
  onSubmit(off, submit, out, async () => {
    const value = code.value.trim();
    await api('/api/me/2fa/totp', { method: 'DELETE', body: /^\d{6}$/.test(value.replace(/\s/g, '')) ? { code: value.replace(/\s/g, '') } : { recoveryCode: value } });
    location.reload();
  });
  const parts = [
    h('h1', {}, 'Two-factor authentication'),
    notice('success', h('span', { dataset: { testid: 'totp-on' } }, `On: an authenticator app, and ${status.recoveryCodesLeft} recovery code(s) left.`)),
    status.requiredByAccount && status.passkeys === 0 ? h('p', { class: 'muted' }, 'Your account requires two factors, so it cannot be turned off while it is your only one.') : off,
  ];
  fill(card, ...parts);
}

function ruleForm(status) {
  const out = h('div', { class: 'form-out' });
  const box = h('input', { id: 'require-2fa', type: 'checkbox', checked: status.requiredByAccount, dataset: { testid: 'require-two-factors' } });
  box.addEventListener('change', async () => {
    fill(out);
    try {
      await api('/api/account/two-factor-requirement', { method: 'PUT', body: { required: box.checked } });
      fill(out, notice('success', box.checked ? 'Every member now signs in with two factors; those without one enrol at their next sign-in.' : 'The rule is lifted.'));
    } catch (err) {
      box.checked = !box.checked;
      fill(out, errorNotice(err));
    }
  });
  return h('div', { class: 'stack' }, h('h2', {}, 'For everyone in your account'), h('label', { class: 'field-inline', for: 'require-2fa' }, box, ' Require two-factor authentication of every member'), out);
}
