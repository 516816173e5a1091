// The page router: every page is the same shell; this picks what to show from the path, after
// checking who is signed in.
import { config, loadSession, signOut, currentUser, nodesListUrl, mustEnrol } from './api.js';
import { fill, h, notice } from './dom.js';
import { signInPage } from './pages/sign-in.js';
import { nodesPage } from './pages/nodes.js';
import { nodePage } from './pages/node.js';
import { connectPage } from './pages/connect.js';
import { tokensPage } from './pages/tokens.js';
import { notFoundPage } from './pages/not-found.js';
import { accountPage } from './pages/account.js';
import { invitationPage } from './pages/invitation.js';
import { signUpPage } from './pages/sign-up.js';
import { verifyEmailPage } from './pages/verify-email.js';
import { resetPasswordPage } from './pages/reset-password.js';
import { twoFactorPage } from './pages/two-factor.js';

const main = document.getElementById('main');

function route(path) {
  const base = config.nodesPath;
  if (path === '/sign-in') return { page: signInPage, public: true };
  if (path === '/tokens') return { page: tokensPage, nav: 'tokens' };
  if (path === '/account') return { page: accountPage, nav: 'account' };
  // Also for a session the account makes enrol first (it reaches nothing else): the page checks itself.
  if (path === '/two-factor') return { page: twoFactorPage, nav: 'account', public: true };
  // Opened by someone without an account yet: the invitation's secret is their credential.
  if (path === '/invitation') return { page: invitationPage, public: true };
  // Before an account exists or while its password is forgotten: the emailed link's secret (or nothing) is the credential.
  if (path === '/sign-up') return { page: signUpPage, public: true };
  if (path === '/verify-email') return { page: verifyEmailPage, public: true };
  if (path === '/reset-password') return { page: resetPasswordPage, public: true };
  if (path === (base || '/') || path === base + '/') return { page: nodesPage, nav: 'nodes' };
  if (path.startsWith(base + '/')) {
    const rest = path.slice(base.length + 1).replace(/\/$/, '').split('/');
    if (rest.length === 1) return { page: nodePage, nav: 'nodes', params: { nodeId: rest[0] } };
    if (rest.length === 2 && rest[1] === 'connect') return { page: connectPage, nav: 'nodes', params: { nodeId: rest[0] } };
  }
  return { page: notFoundPage };
}

function showChrome(user, nav) {
  document.querySelector('.mainnav').hidden = !user;
  document.querySelector('.account').hidden = !user;
  if (!user) return;
  document.querySelector('.account-email').textContent = user.email;
  document.querySelector('[data-nav=nodes]').href = nodesListUrl();
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (a.dataset.nav === nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

export function setTitle(title) {
  document.title = title ? `${title} · RLN Cloud` : 'RLN Cloud';
}

function signInHref() {
  return `/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`;
}

// A 401 from any call while signed in: the session ended (expired, or signed out elsewhere).
let expired = false;
window.addEventListener('rlnc:session-expired', () => {
  if (expired) return;
  expired = true;
  showChrome(null);
  setTitle('Session expired');
  fill(
    main,
    h(
      'section',
      { class: 'card narrow', dataset: { testid: 'session-expired' } },
      h('h1', {}, 'Your session has expired'),
      h('p', {}, 'For your security you were signed out. Sign in again to continue where you left off.'),
      h('a', { class: 'btn btn-primary', href: signInHref() }, 'Sign in again'),
    ),
  );
  main.focus();
});

document.getElementById('sign-out').addEventListener('click', async () => {
  try {
    await signOut();
  } finally {
    location.assign('/sign-in');
  }
});

async function start() {
  const { page, params, public: isPublic, nav } = route(location.pathname);
  let user;
  try {
    user = await loadSession();
  } catch (err) {
    fill(main, notice('error', 'The service could not be reached: ', err.message));
    return;
  }
  if (!user && mustEnrol && location.pathname !== '/two-factor') {
    location.replace(`/two-factor?next=${encodeURIComponent(location.pathname + location.search)}`);
    return;
  }
  if (!user && !isPublic) {
    location.replace(signInHref());
    return;
  }
  showChrome(user, nav);
  fill(main);
  try {
    await page(main, { ...params, user: currentUser, setTitle });
  } catch (err) {
    if (expired) return;
    fill(main, notice('error', h('strong', {}, 'Something went wrong. '), err.message ?? String(err)));
  }
}

start();
