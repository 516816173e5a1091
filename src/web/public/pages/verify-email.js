// The target of a verification link: {PUBLIC_URL}/verify-email#token=<secret>. The secret rides in
// the fragment, which the browser never sends to a server; the page posts it. Without one (or when
// it no longer works) the page offers to send a new link.
import { api } from '../api.js';
import { fill, h, notice } from '../dom.js';

function resendForm() {
  const error = h('div', { class: 'form-error' });
  const email = h('input', { id: 'resend-email', type: 'email', autocomplete: 'username', required: true });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary btn-block' }, 'Send a new link');
  const form = h('form', { class: 'stack' }, h('label', { class: 'field', for: 'resend-email' }, h('span', {}, 'Email'), email), error, submit);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    submit.disabled = true;
    try {
      const done = await api('/api/signup/resend', { method: 'POST', body: { email: email.value }, quietAuth: true });
      fill(form, notice('info', `${done.message}.`));
    } catch (err) {
      fill(error, notice('error', err.message));
      submit.disabled = false;
    }
  });
  return form;
}

export async function verifyEmailPage(main, { setTitle }) {
  setTitle('Verify your email');
  const token = new URLSearchParams(location.hash.slice(1)).get('token');
  const card = h('section', { class: 'card narrow signin', dataset: { testid: 'verify-email' } }, h('h1', {}, 'Verify your email address'));
  fill(main, card);
  if (!token) return card.append(h('p', { class: 'muted' }, 'Lost the message? We send a new link to an address that signed up and is not verified yet.'), resendForm());
  try {
    const verified = await api('/api/signup/verify', { method: 'POST', body: { token }, quietAuth: true });
    // The secret is spent: keep it out of the history from here on.
    history.replaceState(null, '', location.pathname);
    card.append(
      h('p', { dataset: { testid: 'verified' } }, `${verified.email} is verified.`),
      verified.awaitingApproval ? h('p', {}, 'Your account now waits for the operator’s approval; we will email you once it is approved.') : h('a', { class: 'btn btn-primary', href: '/sign-in' }, 'Sign in'),
    );
  } catch (err) {
    card.append(notice('error', err.code === 'invalid_link' ? 'This link was used already or has expired. Ask for a new one:' : err.message), resendForm());
  }
}
