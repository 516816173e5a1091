// Passkeys in the browser, with navigator.credentials directly: the pages are plain ES modules
// with no build step, so the few lines of @simplewebauthn/browser that matter live here. The API
// answers WebAuthn options in their JSON form (binary fields as base64url) and takes credentials
// back in that form: these functions turn one into the other around create() and get().
import { api, ApiError } from './api.js';

const toBytes = (b64url) => Uint8Array.from(atob(b64url.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (b64url.length % 4)) % 4)), (c) => c.charCodeAt(0));
const toB64url = (buffer) => btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const withIds = (list) => (list ?? []).map((c) => ({ ...c, id: toBytes(c.id) }));

/** Whether this browser can use passkeys at all (a secure context: https, or http://localhost). */
export const passkeysSupported = () => typeof window.PublicKeyCredential === 'function' && window.isSecureContext;

/** Why a ceremony failed, in words: the browser's errors name their cause, not what to do. */
function refusal(err) {
  if (err instanceof ApiError) return err;
  if (err?.name === 'NotAllowedError') return new ApiError(0, 'passkey_cancelled', 'The passkey prompt was closed or timed out; try again.');
  if (err?.name === 'InvalidStateError') return new ApiError(0, 'passkey_exists', 'This authenticator holds a passkey for your account already.');
  return new ApiError(0, 'passkey_failed', `Your browser refused the passkey: ${err?.message ?? err}`);
}

/** Enrols a passkey: the options from the API, the browser's new credential, back to the API. */
export async function addPasskey(name) {
  try {
    const options = await api('/api/me/passkeys/registration-options', { method: 'POST' });
    const credential = await navigator.credentials.create({
      publicKey: { ...options, challenge: toBytes(options.challenge), user: { ...options.user, id: toBytes(options.user.id) }, excludeCredentials: withIds(options.excludeCredentials) },
    });
    const response = {
      id: credential.id,
      rawId: toB64url(credential.rawId),
      type: credential.type,
      response: {
        clientDataJSON: toB64url(credential.response.clientDataJSON),
        attestationObject: toB64url(credential.response.attestationObject),
        transports: credential.response.getTransports?.() ?? [],
      },
      clientExtensionResults: {},
    };
    return await api('/api/me/passkeys', { method: 'POST', body: { name, response } });
  } catch (err) {
    throw refusal(err);
  }
}

/** A passkey's answer to options from `optionsPath` (a sign-in, or a factor for this session). */
export async function usePasskey(optionsPath) {
  try {
    const options = await api(optionsPath, { method: 'POST', quietAuth: true });
    const credential = await navigator.credentials.get({
      publicKey: { ...options, challenge: toBytes(options.challenge), allowCredentials: withIds(options.allowCredentials) },
    });
    const r = credential.response;
    return {
      id: credential.id,
      rawId: toB64url(credential.rawId),
      type: credential.type,
      response: {
        clientDataJSON: toB64url(r.clientDataJSON),
        authenticatorData: toB64url(r.authenticatorData),
        signature: toB64url(r.signature),
        ...(r.userHandle ? { userHandle: toB64url(r.userHandle) } : {}),
      },
      clientExtensionResults: {},
    };
  } catch (err) {
    throw refusal(err);
  }
}
