// RLN's errors, as devnode answers them. One closed catalog (name -> status and text), one error
// class and one body builder; handlers throw, only the HTTP layer turns errors into responses.
// Texts and statuses are copied from RLN's src/error.rs so clients see the same answers.

interface CatalogEntry {
  status: number;
  /** Builds the `error` text; `detail` fills RLN's `{0}` where the variant has one. */
  text: (detail: string) => string;
}

const CATALOG = {
  AlreadyInitialized: { status: 403, text: () => 'Node has already been initialized' },
  AlreadyUnlocked: { status: 403, text: () => 'Node has already been unlocked' },
  ChangingState: { status: 403, text: () => 'Cannot call other APIs while node is changing state' },
  LockedNode: { status: 403, text: () => 'Node is locked (hint: call unlock)' },
  NotInitialized: { status: 403, text: () => 'Wallet has not been initialized (hint: call init)' },
  UnlockedNode: { status: 403, text: () => 'Node is unlocked (hint: call lock)' },
  WrongPassword: { status: 401, text: () => 'The provided password is incorrect' },
  InvalidPassword: { status: 400, text: (d) => `Invalid password: ${d}` },
  InvalidMnemonic: { status: 400, text: (d) => `Invalid mnemonic: ${d}` },
  // POST /backup onto a path that already exists (RLN never overwrites a file there).
  InvalidBackupPath: { status: 400, text: () => 'Invalid backup path' },
  UnsupportedBackupVersion: { status: 400, text: (d) => `The provided backup has an unsupported version: ${d}` },
  // RLN reports body problems as axum's JSON rejection (named JsonExtractorRejection, 400/415/422);
  // devnode uses one name and status for all of them, as the service's API notes describe.
  InvalidRequest: { status: 400, text: (d) => d },
  Unauthorized: { status: 401, text: () => 'Missing or invalid credentials' },
  // With --root-public-key: a valid token whose role does not cover the route (RLN's AuthError).
  Forbidden: { status: 403, text: () => "You don't have access to this resource" },
  // POST /revoketoken with a token that does not parse or is not signed by the root key.
  InvalidBiscuitToken: { status: 400, text: () => 'Invalid Biscuit token' },
  // POST /revoketoken on a node started with --disable-authentication.
  AuthenticationDisabled: { status: 403, text: () => 'Authentication is disabled' },
  // RLN (axum) answers unknown paths with an empty 404/405; devnode keeps the error shape so
  // every devnode answer parses the same way.
  NotFound: { status: 404, text: (d) => `Not found: ${d}` },
  MethodNotAllowed: { status: 405, text: (d) => `Method not allowed: ${d}` },
  PayloadTooLarge: { status: 413, text: () => 'Request body too large' },
  // Continuous state (--vss-url, vss/continuous-state.ts): devnode's names for RLN's fork's VSS errors.
  VssFenced: {
    status: 409,
    text: (d) => `Another node instance (${d}) holds this VSS store's fence __rln_instance__; stop it, or call /vssclearfence once it is gone`,
  },
  VssUnavailable: { status: 503, text: (d) => `VSS write or read failed: ${d}` },
  VssNotConfigured: { status: 400, text: () => 'VSS is not configured (hint: start the node with --vss-url)' },
  Unexpected: { status: 500, text: (d) => `Unexpected error: ${d}` },
} satisfies Record<string, CatalogEntry>;

export type RlnErrorName = keyof typeof CATALOG;

export interface RlnErrorBody {
  error: string;
  code: number;
  name: RlnErrorName;
}

export class RlnError extends Error {
  readonly status: number;

  constructor(readonly rlnName: RlnErrorName, detail = '') {
    const entry: CatalogEntry = CATALOG[rlnName];
    super(entry.text(detail));
    this.status = entry.status;
  }

  toBody(): RlnErrorBody {
    return { error: this.message, code: this.status, name: this.rlnName };
  }
}
