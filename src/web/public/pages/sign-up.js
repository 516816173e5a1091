// Sign-up with an email address and a password (SIGNUP_MODE=open or approval). The answer is the
// same whether or not the address has an account: the page says to check the mailbox either way.
import { api, currentUser, nodesListUrl } from '../api.js';
import { fill, h, notice } from '../dom.js';

export async function signUpPage(main, { setTitle }) {
  setTitle('Sign up');
  if (currentUser) return location.replace(nodesListUrl());
  const error = h('div', { class: 'form-error' });
  const email = h('input', { id: 'signup-email', type: 'email', autocomplete: 'username', required: true });
  const password = h('input', { id: 'signup-password', type: 'password', autocomplete: 'new-password', minlength: 8, required: true });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary btn-block' }, 'Create my account');
  const form = h(
    'form',
    { class: 'stack' },
    h('label', { class: 'field', for: 'signup-email' }, h('span', {}, 'Email'), email),
    h('label', { class: 'field', for: 'signup-password' }, h('span', {}, 'Password (8 characters or more; a few unrelated words are strong)'), password),
    error,
    submit,
  );
  const card = h('section', { class: 'card narrow signin', dataset: { testid: 'sign-up' } }, h('h1', {}, 'Create an RLN Cloud account'), form, h('p', { class: 'muted small' }, 'Already have one? ', h('a', { href: '/sign-in' }, 'Sign in'), '.'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    fill(error);
    submit.disabled = true;
    try {
      const done = await api('/api/signup', { method: 'POST', body: { email: email.value, password: password.value }, quietAuth: true });
      fill(card, h('h1', {}, 'Check your email'), h('p', { dataset: { testid: 'sign-up-done' } }, `We sent a message to ${email.value}: ${done.message}. Open its link within 24 hours to verify your address, then sign in.`), h('p', { class: 'muted small' }, 'Nothing arrived? ', h('a', { href: '/verify-email' }, 'Send the link again'), '.'));
    } catch (err) {
      fill(error, notice('error', err.code === 'weak_password' ? 'This password is too easy to guess. Try a few unrelated words.' : err.message));
      submit.disabled = false;
    }
  });
  fill(main, card);
  email.focus();
}
