// POST /init, /lock, /changepassword and /shutdown (unlock has its own file: it takes two bodies).
import type { Route } from '../route.ts';

export const initRoute: Route = {
  method: 'POST',
  path: '/init',
  guard: 'lifecycle',
  jsonBody: true,
  // Request {password, mnemonic?}; newer RLN versions accept a mnemonic to restore from.
  async handle({ wallet }, body) {
    const mnemonic = await wallet.init(body.requiredString('password'), body.optionalString('mnemonic'));
    return { mnemonic };
  },
};

export const lockRoute: Route = {
  method: 'POST',
  path: '/lock',
  guard: 'lifecycle',
  jsonBody: false,
  async handle({ wallet }) {
    await wallet.lock();
    return {};
  },
};

export const changePasswordRoute: Route = {
  method: 'POST',
  path: '/changepassword',
  guard: 'lifecycle',
  jsonBody: true,
  async handle({ wallet }, body) {
    await wallet.changePassword(body.requiredString('old_password'), body.requiredString('new_password'));
    return {};
  },
};

export const shutdownRoute: Route = {
  method: 'POST',
  path: '/shutdown',
  guard: 'lifecycle',
  jsonBody: false,
  // Allowed locked or unlocked; the process exits (code 0) once this answer has been sent.
  handle({ wallet, requestShutdown }) {
    wallet.requireNotChangingState();
    requestShutdown();
    return {};
  },
};
