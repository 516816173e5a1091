// The target of an invitation link: {PUBLIC_URL}/invitation#token=<secret>. The secret rides in the
// fragment, which the browser never sends to a server (nor in a Referer); the page posts it with the
// chosen password, then signs the new member in; one who joined through a link passed on by hand
// (not emailed) is asked to verify their address first.
import { api, signIn } from '../api.js';
import { fill, h, notice } from '../dom.js';

export async function invitationPage(main, { setTitle }) {
  setTitle('Join an account');
  const token = new URLSearchParams(location.hash.slice(1)).get('token');
  if (!token) {
    return fill(main, h('section', { class: 'card narrow' }, h('h1', {}, 'Invitation'), notice('error', 'This link carries no invitation. Open the whole link you were given.')));
  }
  const error = h('div', { class: 'form-error' });
  const password = h('input', { id: 'invite-password', type: 'password', autocomplete: 'new-password', minlength: 8, required: true });
  const repeat = h('input', { id: 'invite-password-repeat', type: 'password', autocomplete: 'new-password', minlength: 8, required: true });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary btn-block' }, 'Join and sign in');
  const form = h(
    'form',
    { class: 'stack' },
    h('label', { class: 'field', for: 'invite-password' }, h('span', {}, 'Choose a password (8 characters or more)'), password),
    h('label', { class: 'field', for: 'invite-password-repeat' }, h('span', {}, 'Repeat it'), repeat),
    error,
    submit,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    fill(error);
    if (password.value !== repeat.value) return fill(error, notice('error', 'The two passwords differ.'));
    submit.disabled = true;
    try {
      const joined = await api('/api/account/invitations/accept', { method: 'POST', body: { token, password: password.value }, quietAuth: true });
      // The secret is spent: keep it out of the history from here on.
      history.replaceState(null, '', location.pathname);
      if (!joined.emailVerified) {
        // A link passed on by hand proves nothing about the address: it is verified by email first.
        return fill(main, h('section', { class: 'card narrow', dataset: { testid: 'invitation-verify' } }, h('h1', {}, 'Check your email'), notice('ok', `You joined. A link to verify ${joined.email} is on its way: open it, then sign in.`)));
      }
      await signIn(joined.email, password.value);
      location.assign('/account');
    } catch (err) {
      const why =
        err.code === 'invitation_not_found' ? 'This invitation was already used, revoked or has expired. Ask for a new one.'
        : err.code === 'user_exists' ? err.message
        : err.message;
      fill(error, notice('error', why));
      submit.disabled = false;
    }
  });
  fill(
    main,
    h(
      'section',
      { class: 'card narrow signin', dataset: { testid: 'invitation' } },
      h('h1', {}, 'Join an RLN Cloud account'),
      h('p', { class: 'muted' }, 'You were invited to work on an account’s nodes. Set your password to join; you sign in with the email the invitation was sent for.'),
      form,
    ),
  );
  password.focus();
}
