// The one way the pages call the JSON API: the session cookie goes along by itself, the CSRF token
// goes in a header on every change, and a refusal becomes an ApiError carrying the API's message.

export const config = JSON.parse(document.getElementById('rlnc-config').textContent);

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let csrfToken = null;
export let currentUser = null;
/** True when the session must enrol a second factor first (the account requires two): only /two-factor works. */
export let mustEnrol = false;
/** True when the session still owes its second factor (a provider's sign-in came back to /sign-in). */
export let owesSecondFactor = false;

export function setCsrfToken(token) {
  csrfToken = token;
}

/** Loads the signed-in user; resolves to null when nobody is signed in. */
export async function loadSession() {
  const res = await fetch('/api/session', { headers: { accept: 'application/json' }, credentials: 'same-origin' });
  if (res.status === 401) {
    const error = (await res.clone().json().catch(() => ({})))?.error;
    if (error?.code === 'second_factor_required' && error.details?.csrfToken) {
      csrfToken = error.details.csrfToken;
      owesSecondFactor = true;
    }
    return null;
  }
  if (res.status === 403) {
    const code = (await res.clone().json().catch(() => ({})))?.error?.code;
    if (code === 'two_factor_enrolment_required') {
      mustEnrol = true;
      return null;
    }
  }
  const body = await parse(res);
  csrfToken = body.csrfToken;
  currentUser = body.user;
  return body.user;
}

/** Resolves to the session's stage: `full`, `second_factor` (call secondFactor next) or `enrol`. */
export async function signIn(email, password) {
  const body = await api('/api/session', { method: 'POST', body: { email, password }, quietAuth: true });
  csrfToken = body.csrfToken;
  if (body.stage === 'full' || body.stage === undefined) currentUser = body.user;
  return body.stage ?? 'full';
}

/** The second step of a sign-in: `{code}` or `{recoveryCode}`; the session cookie is replaced. */
export async function secondFactor(factor) {
  const body = await api('/api/session/second-factor', { method: 'POST', body: factor, quietAuth: true });
  csrfToken = body.csrfToken;
  currentUser = body.user;
  return body.user;
}

/** A sign-in without a password: a passkey's answer to POST /api/session/passkey/options (passkeys.js). */
export async function passkeySignIn(response) {
  const body = await api('/api/session/passkey', { method: 'POST', body: { response }, quietAuth: true });
  csrfToken = body.csrfToken;
  currentUser = body.user;
  return body.user;
}

export async function signOut() {
  await api('/api/session', { method: 'DELETE', quietAuth: true });
  csrfToken = null;
  currentUser = null;
}

/**
 * Calls the API. A 401 on a page that was signed in means the session ended: the app shows the
 * "session expired" screen (unless quietAuth, for the sign-in form itself).
 */
export async function api(path, { method = 'GET', body, quietAuth = false } = {}) {
  const headers = { accept: 'application/json' };
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['x-csrf-token'] = csrfToken;
  // The UI's own reads of the service's records are not metered (src/api/quota-routes.ts).
  if (method === 'GET' || method === 'HEAD') headers['x-rlnc-ui'] = 'read';
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'network_error', 'the service could not be reached; check your connection and try again');
  }
  if (res.status === 401 && !quietAuth) {
    window.dispatchEvent(new CustomEvent('rlnc:session-expired'));
  }
  return parse(res);
}

async function parse(res) {
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    const error = json?.error;
    throw new ApiError(res.status, error?.code ?? 'http_' + res.status, error?.message ?? `the service answered ${res.status} ${res.statusText}`);
  }
  return json ?? {};
}

/** Where a node's pages live: {CONNECT_PAGE_URL}/<node_id> and .../connect. */
export const nodeUrl = (nodeId) => `${config.nodesPath}/${nodeId}`;
export const connectUrl = (nodeId) => `${config.nodesPath}/${nodeId}/connect`;
export const nodesListUrl = () => config.nodesPath || '/';
