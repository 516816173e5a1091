// Password reset: without a secret, the request form (the same answer for every address); as the
// target of the emailed link, {PUBLIC_URL}/reset-password#token=<secret>, the new password's form.
import { api } from '../api.js';
import { fill, h, notice } from '../dom.js';

function requestForm(card) {
  const error = h('div', { class: 'form-error' });
  const email = h('input', { id: 'reset-email', type: 'email', autocomplete: 'username', required: true });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary btn-block' }, 'Email me a link');
  const form = h('form', { class: 'stack' }, h('label', { class: 'field', for: 'reset-email' }, h('span', {}, 'Email'), email), error, submit);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    submit.disabled = true;
    try {
      const done = await api('/api/password-reset', { method: 'POST', body: { email: email.value }, quietAuth: true });
      fill(form, notice('info', `${done.message}. The link works once, for an hour.`));
    } catch (err) {
      fill(error, notice('error', err.message));
      submit.disabled = false;
    }
  });
  card.append(h('p', { class: 'muted' }, 'We email a link to choose a new password to the address, if it has an account.'), form);
  email.focus();
}

function confirmForm(card, token) {
  const error = h('div', { class: 'form-error' });
  const password = h('input', { id: 'new-password', type: 'password', autocomplete: 'new-password', minlength: 8, required: true });
  const repeat = h('input', { id: 'new-password-repeat', type: 'password', autocomplete: 'new-password', minlength: 8, required: true });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary btn-block' }, 'Set my new password');
  const form = h(
    'form',
    { class: 'stack' },
    h('label', { class: 'field', for: 'new-password' }, h('span', {}, 'New password (8 characters or more)'), password),
    h('label', { class: 'field', for: 'new-password-repeat' }, h('span', {}, 'Repeat it'), repeat),
    error,
    submit,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    fill(error);
    if (password.value !== repeat.value) return fill(error, notice('error', 'The two passwords differ.'));
    submit.disabled = true;
    try {
      const done = await api('/api/password-reset/confirm', { method: 'POST', body: { token, password: password.value }, quietAuth: true });
      history.replaceState(null, '', location.pathname);
      fill(form, h('p', { dataset: { testid: 'password-reset-done' } }, `${done.message}.`), h('a', { class: 'btn btn-primary', href: '/sign-in' }, 'Sign in'));
    } catch (err) {
      const why = err.code === 'invalid_link' ? 'This link was used already or has expired. Ask for a new one on this page without the link.'
        : err.code === 'weak_password' ? 'This password is too easy to guess. Try a few unrelated words.'
        : err.message;
      fill(error, notice('error', why));
      submit.disabled = false;
    }
  });
  card.append(form);
  password.focus();
}

export async function resetPasswordPage(main, { setTitle }) {
  setTitle('Reset your password');
  const token = new URLSearchParams(location.hash.slice(1)).get('token');
  const card = h('section', { class: 'card narrow signin', dataset: { testid: 'reset-password' } }, h('h1', {}, token ? 'Choose a new password' : 'Forgot your password?'));
  fill(main, card);
  if (token) confirmForm(card, token);
  else requestForm(card);
}
