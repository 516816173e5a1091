// Sign-in with email and password.
import { config, signIn, nodesListUrl, currentUser } from '../api.js';
import { fill, h, notice } from '../dom.js';

/** Only a path on this site: a `next` pointing elsewhere would make this an open redirect. */
function nextPath() {
  const next = new URLSearchParams(location.search).get('next');
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/sign-in') ? next : nodesListUrl();
}

export async function signInPage(main, { setTitle }) {
  setTitle('Sign in');
  if (currentUser) return location.replace(nextPath());
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
      await signIn(email.value, password.value);
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
      ...(config.oidcProviders ?? []).map((p) => h('p', {}, h('a', { class: 'btn btn-block', href: `/auth/oidc/${encodeURIComponent(p.id)}`, dataset: { testid: `oidc-${p.id}` } }, p.label))),
      h('p', { class: 'muted small' }, h('a', { href: '/reset-password' }, 'Forgot your password?')),
      config.signupOpen
        ? h('p', { class: 'muted small' }, 'New here? ', h('a', { href: '/sign-up' }, 'Create an account'), '.')
        : h('p', { class: 'muted small' }, 'No account yet? Ask an account owner to invite you.'),
    ),
  );
  email.focus();
}
