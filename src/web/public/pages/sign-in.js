// Sign-in with email and password, an OpenID provider, or a passkey alone; then the second factor
// where one is owed (a code, a recovery code or a passkey).
import { config, signIn, secondFactor, nodesListUrl, currentUser, owesSecondFactor, passkeySignIn } from '../api.js';
import { passkeysSupported, usePasskey } from '../passkeys.js';
import { fill, h, notice } from '../dom.js';

/** Only a path on this site: a `next` pointing elsewhere would make this an open redirect. */
function nextPath() {
  const next = new URLSearchParams(location.search).get('next');
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/sign-in') ? next : nodesListUrl();
}

export async function signInPage(main, { setTitle }) {
  setTitle('Sign in');
  if (currentUser) return location.replace(nextPath());
  // Back from an OpenID provider with a second factor still owed: only the code is asked.
  if (owesSecondFactor) return fill(main, secondFactorCard());
  const error = h('div', { class: 'form-error' });
  const email = h('input', { id: 'email', name: 'email', type: 'email', autocomplete: 'username', required: true, autofocus: true });
  const password = h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary btn-block' }, 'Sign in');
  const form = h(
    'form',
    { class: 'stack', novalidate: false },
    h('label', { class: 'field', for: 'email' }, h('span', {}, 'Email'), email),
    h('label', { class: 'field', for: 'password' }, h('span', {}, 'Password'), password),
    error,
    submit,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    submit.disabled = true;
    submit.textContent = 'Signing in…';
    fill(error);
    try {
      const stage = await signIn(email.value, password.value);
      if (stage === 'second_factor') return fill(main, secondFactorCard());
      if (stage === 'enrol') return location.assign(`/two-factor?next=${encodeURIComponent(nextPath())}`);
      location.assign(nextPath());
    } catch (err) {
      const why =
        err.status === 401 ? 'The email or the password is wrong.'
        : err.code === 'email_not_verified' ? h('span', {}, err.message, ' ', h('a', { href: '/verify-email' }, 'Send the link again'))
        : err.message;
      fill(error, notice('error', why));
      password.value = '';
      password.focus();
      submit.disabled = false;
      submit.textContent = 'Sign in';
    }
  });
  fill(
    main,
    h(
      'section',
      { class: 'card narrow signin' },
      h('h1', {}, 'Sign in to RLN Cloud'),
      h('p', { class: 'muted' }, 'Manage your hosted RGB Lightning Nodes.'),
      form,
      passkeyButton(error),
      ...(config.oidcProviders ?? []).map((p) => h('p', {}, h('a', { class: 'btn btn-block', href: `/auth/oidc/${encodeURIComponent(p.id)}`, dataset: { testid: `oidc-${p.id}` } }, p.label))),
      h('p', { class: 'muted small' }, h('a', { href: '/reset-password' }, 'Forgot your password?')),
      config.signupOpen
        ? h('p', { class: 'muted small' }, 'New here? ', h('a', { href: '/sign-up' }, 'Create an account'), '.')
        : h('p', { class: 'muted small' }, 'No account yet? Ask an account owner to invite you.'),
    ),
  );
  email.focus();
}

/** Offered where passkeys work (PUBLIC_URL names a host, the browser is in a secure context): signs in without email or password. */
function passkeyButton(error) {
  if (!config.passkeys || !passkeysSupported()) return null;
  const button = h('button', { type: 'button', class: 'btn btn-block', dataset: { testid: 'passkey-sign-in' } }, 'Sign in with a passkey');
  button.addEventListener('click', async () => {
    button.disabled = true;
    fill(error);
    try {
      await passkeySignIn(await usePasskey('/api/session/passkey/options'));
      location.assign(nextPath());
    } catch (err) {
      fill(error, notice('error', err.status === 401 ? 'That passkey was not accepted. Try again, or sign in with your password.' : err.message));
      button.disabled = false;
    }
  });
  return h('p', {}, button);
}

/** The second step: a code from the authenticator, one of the recovery codes, or a passkey. */
function secondFactorCard() {
  const error = h('div', { class: 'form-error' });
  const code = h('input', { id: 'code', name: 'code', inputmode: 'numeric', autocomplete: 'one-time-code', pattern: '[0-9 ]*', required: true, autofocus: true });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary btn-block' }, 'Verify');
  let recovery = false;
  const label = h('span', {}, 'Code from your authenticator app');
  const toggle = h('button', { type: 'button', class: 'btn btn-link', dataset: { testid: 'use-recovery-code' } }, 'Use a recovery code instead');
  toggle.addEventListener('click', () => {
    recovery = !recovery;
    label.textContent = recovery ? 'Recovery code' : 'Code from your authenticator app';
    code.setAttribute('inputmode', recovery ? 'text' : 'numeric');
    code.removeAttribute('pattern');
    toggle.textContent = recovery ? 'Use a code from your authenticator' : 'Use a recovery code instead';
    code.value = '';
    code.focus();
  });
  const form = h('form', { class: 'stack', dataset: { testid: 'second-factor' } }, h('label', { class: 'field', for: 'code' }, label, code), error, submit, toggle);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    submit.disabled = true;
    fill(error);
    try {
      await secondFactor(recovery ? { recoveryCode: code.value.trim() } : { code: code.value.replace(/\s/g, '') });
      location.assign(nextPath());
    } catch (err) {
      fill(error, notice('error', err.status === 401 ? 'Your sign-in expired; reload the page and sign in again.' : err.message));
      code.value = '';
      code.focus();
      submit.disabled = false;
    }
  });
  let withPasskey = null;
  if (config.passkeys && passkeysSupported()) {
    withPasskey = h('button', { type: 'button', class: 'btn btn-block', dataset: { testid: 'second-factor-passkey' } }, 'Use a passkey');
    withPasskey.addEventListener('click', async () => {
      withPasskey.disabled = true;
      fill(error);
      try {
        await secondFactor({ passkey: await usePasskey('/api/me/2fa/passkey-options') });
        location.assign(nextPath());
      } catch (err) {
        fill(error, notice('error', err.status === 401 ? 'Your sign-in expired; reload the page and sign in again.' : err.message));
        withPasskey.disabled = false;
      }
    });
  }
  return h(
    'section',
    { class: 'card narrow signin' },
    h('h1', {}, 'Two-factor authentication'),
    h('p', { class: 'muted' }, 'Enter the 6-digit code your authenticator app shows for RLN Cloud, or use a passkey.'),
    form,
    withPasskey,
  );
}
