// The closed set of error codes the service answers with, and the one map from code to HTTP
// status. Services throw AppError; only the API's error handler turns it into a response body
// `{"error": {"code", "message", "requestId"}}`.

export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_json: 400,
  invalid_path: 400,
  // Sign-up and password reset (signup/): a password the strength check refuses; a one-time email
  // link that is unknown, used or expired (one answer for all three).
  weak_password: 400,
  invalid_link: 400,
  // An export (POST /api/nodes/{id}/export) whose `confirm` is not the node's name.
  export_not_confirmed: 400,
  unauthorized: 401,
  forbidden: 403,
  wrong_password: 403,
  // Second factors (accounts/two-factor.ts): a TOTP or recovery code that is wrong, used already, or
  // not for this person; a session that still owes its second factor; one that must enrol first.
  wrong_second_factor: 403,
  second_factor_required: 401,
  two_factor_enrolment_required: 403,
  // Passkeys (accounts/passkeys.ts) where PUBLIC_URL's host is an IP address: browsers refuse WebAuthn there.
  passkeys_need_host_name: 409,
  certificate_unknown: 403,
  certificate_revoked: 403,
  certificate_expired: 403,
  certificate_not_for_node: 403,
  forbidden_scope: 403,
  // The member's role in the account is below the route's least role (api/route-roles.ts).
  forbidden_role: 403,
  // Creating a node or inviting a member would pass a limit of the account's plan.
  plan_limit_reached: 403,
  // Sign-in with the right password, but the address is not verified yet or the account waits
  // for the operator's approval (SIGNUP_MODE=approval); sign-up when SIGNUP_MODE does not allow it.
  email_not_verified: 403,
  awaiting_approval: 403,
  signup_closed: 403,
  not_found: 404,
  node_not_found: 404,
  user_not_found: 404,
  token_not_found: 404,
  member_not_found: 404,
  invitation_not_found: 404,
  session_not_found: 404,
  passkey_not_found: 404,
  transfer_not_found: 404,
  plan_not_found: 404,
  certificate_not_found: 404,
  release_not_found: 404,
  delivery_not_found: 404,
  log_export_not_found: 404,
  backup_not_found: 404,
  method_not_allowed: 405,
  build_in_progress: 409,
  already_running: 409,
  already_stopped: 409,
  node_destroyed: 409,
  node_not_running: 409,
  // continuousState asked for a node whose release's RLN build has no VSS client (domain/release-features.ts).
  continuous_state_unsupported: 409,
  node_state_conflict: 409,
  invalid_state: 409,
  nothing_to_upgrade: 409,
  webhook_not_configured: 409,
  log_export_in_progress: 409,
  backup_in_progress: 409,
  backup_not_ready: 409,
  // One live copy of a wallet (backups/restore-fence.ts): the backup's node still exists, the
  // backup is older than that node's newest, the node was superseded by a restore of its wallet.
  source_node_live: 409,
  backup_older_than_source: 409,
  node_superseded: 409,
  // The node's wallet was exported (it left with its owner): the node never runs here again, and no
  // backup of that wallet is restored here (only the customer's copy lives).
  node_exported: 409,
  wallet_exported: 409,
  // Past BACKUP_UPLOAD_QUOTA_BYTES or BACKUP_UPLOAD_QUOTA_COUNT of stored uploads.
  backup_quota_exceeded: 409,
  node_not_initialized: 409,
  // Storage lost (nodes/storage-lost.ts): a STORAGE_LOST node is only recovered or destroyed, and
  // only a STORAGE_LOST node is recovered.
  node_storage_lost: 409,
  storage_not_lost: 409,
  // An RLN backup restored into a node that writes its state to VSS (domain/continuous-state.ts):
  // its older local state would win over the newer state in VSS.
  restore_refused_continuous_state: 409,
  idempotency_conflict: 409,
  user_exists: 409,
  release_exists: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  no_ports_available: 503,
  rate_limited: 429,
  // The account's API calls this month reached its plan's limit; answered until the next month (UTC).
  quota_exceeded: 429,
  internal_error: 500,
  node_unreachable: 502,
  node_error: 502,
  node_timeout: 504,
  service_unavailable: 503,
  // Too many password hashes running and waiting in this process (auth/password-gate.ts): come back in a second.
  server_busy: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

export class AppError extends Error {
  constructor(
    public readonly code: ErrorCode,
    message: string,
    /** Extra machine-readable detail, e.g. the offending fields of a bad request. */
    public readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AppError';
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export const nodeNotFound = (id: string) => new AppError('node_not_found', `node ${id} was not found`);
