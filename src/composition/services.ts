// The services, built from the configuration in dependency order: what `serve` runs and what the
// operator commands use, through the same functions. Constructors here do no I/O; whatever reads
// files or the network (the CA, the runtime) is loaded by the caller and handed in.
import { AuthenticationRolloutService } from '../releases/authentication-rollout.ts';
import type { Config } from '../config.ts';
import type { Database, Queryable } from '../db/database.ts';
import { AccountService } from '../accounts/service.ts';
import { MemberService } from '../accounts/members.ts';
import { OwnershipTransfers } from '../accounts/ownership-transfer.ts';
import { AccountDeletion } from '../accounts/account-deletion.ts';
import { PlanService } from '../accounts/plans.ts';
import { ReleaseService } from '../releases/service.ts';
import { NodeService } from '../nodes/service.ts';
import type { NodeRuntime } from '../runtime/types.ts';
import { TwoFactor } from '../accounts/two-factor.ts';
import { Passkeys } from '../accounts/passkeys.ts';
import { WebhookKeyring } from '../webhooks/signing-keys.ts';
import { WebhookService } from '../webhooks/service.ts';
import { createBlobStore } from '../blobs/create-blob-store.ts';
import { VssService, type VssMetrics } from '../vss/vss-service.ts';
import { SigsVerifier } from '../vss/sigs-auth.ts';
import { LogExportService } from '../logs/export-service.ts';
import { CertificateService } from '../pki/client-certificates.ts';
import type { CertificateAuthority } from '../pki/certificate-authority.ts';
import type { UnlockSeal } from '../secrets/unlock-seal.ts';
import type { Logger } from '../logger.ts';
import { AuditLog, type AuditMetrics } from '../audit/audit-log.ts';
import { UnlockSealKeys } from '../secrets/unlock-seal-keys.ts';
import { SEALED_VALUE_STORES } from './unlock-seal.ts';
import { UsageService } from '../usage/service.ts';
import { ApiCallMeter, type ApiCallMetrics } from '../usage/api-call-meter.ts';
import { passwordGate } from '../auth/passwords.ts';
import { Mailer } from '../mail/mailer.ts';
import { Outbox } from '../mail/outbox.ts';
import { SignupService } from '../signup/service.ts';
import { Notifications } from '../notifications/service.ts';

// The gate is the process's (auth/passwords.ts): whichever services are built, serving or operator, set its limits.
const accountsOf = (db: Database, config: Config) => {
  passwordGate.configure(config.passwordHashing);
  return new AccountService(db);
};
const plansOf = (db: Database) => new PlanService(db);

const releasesOf = (db: Database, config: Config) =>
  new ReleaseService(db, { concurrency: config.rolloutConcurrency, failureBudget: config.rolloutFailureBudget });

const authenticationRolloutOf = (db: Database, config: Config) =>
  new AuthenticationRolloutService(db, { concurrency: config.rolloutConcurrency, failureBudget: config.rolloutFailureBudget });

const webhookKeysOf = (config: Config) =>
  new WebhookKeyring(config.webhooks.signingKeyFile, config.webhooks.keyOverlapMs, config.webhooks.signatureSchemes);

const certificatesOf = (db: Database, config: Config, ca: CertificateAuthority | undefined) =>
  new CertificateService({ db, maxValidityDays: config.nodeAccess.clientCertDays, userNodeUrl: config.userNodeUrl, ca });

const mailerOf = (config: Config, log: Logger) => new Mailer({ config: config.mail, publicUrl: config.publicUrl, log: log.child({ part: 'mail' }) });

const signupOf = (db: Database, config: Config, log: Logger, audit: AuditLog) =>
  new SignupService({
    db,
    config: config.signup,
    mailer: mailerOf(config, log),
    publicUrl: config.publicUrl,
    serviceName: config.mail.serviceName,
    audit,
    log: log.child({ part: 'signup' }),
  });

const auditOf = (db: Database, log: Logger, metrics?: AuditMetrics) => new AuditLog({ db, log: log.child({ part: 'audit' }), metrics });

const unlockSealKeysOf = (db: Database, seal: UnlockSeal) => new UnlockSealKeys({ db, seal, stores: SEALED_VALUE_STORES });

/**
 * Every service of a serving process. `ca` is the node access CA (pki/ca-store.ts), `unlockSeal`
 * the seal of the passwords the service keeps (automatic unlock, restores in flight;
 * composition/unlock-seal.ts) and `runtime` what runs the nodes (runtime/create-runtime.ts), all
 * loaded first.
 */
export function buildServices(
  db: Database,
  config: Config,
  ca: CertificateAuthority | undefined,
  unlockSeal: UnlockSeal,
  runtime: Pick<NodeRuntime<Queryable>, 'assignPorts'>,
  log: Logger,
  metrics?: AuditMetrics & ApiCallMetrics & VssMetrics,
) {
  const accounts = accountsOf(db, config);
  const mailer = mailerOf(config, log);
  const audit = auditOf(db, log, metrics);
  const signup = signupOf(db, config, log, audit);
  const members = new MemberService({
    db,
    accounts,
    publicUrl: config.publicUrl,
    mailer,
    signup,
  });
  const transfers = new OwnershipTransfers({ db, accounts });
  const plans = plansOf(db);
  const releases = releasesOf(db, config);
  const webhookKeys = webhookKeysOf(config);
  const webhooks = new WebhookService({
    db,
    keyring: webhookKeys,
    policy: { allowPrivateTargets: config.webhooks.allowPrivateTargets, httpsOnly: !config.webhooks.allowHttp },
  });
  const nodes = new NodeService({
    db,
    config,
    runtime,
    // Every webhook URL a node is given passes the SSRF policy inside the service.
    webhooks,
    // Restore passwords are kept sealed only until the node's create build has restored the backup (backups/restore-into-node.ts).
    seal: unlockSeal,
  });
  const blobs = createBlobStore(config);
  const backupBlobs = createBlobStore(config, 'backups');
  // Collected node output on Kubernetes (logs/node-log-collection.ts); unused on the process runtime.
  const nodeLogBlobs = createBlobStore(config, 'node-logs');
  const logExports = new LogExportService({ db, blobs, config });
  const certificates = certificatesOf(db, config, ca);
  const unlockSealKeys = unlockSealKeysOf(db, unlockSeal);
  const twoFactor = new TwoFactor({ db, audit, passkeys: new Passkeys({ db, publicUrl: config.publicUrl }) });
  // An owner without a password confirms the deletion with a second factor.
  const accountDeletion = new AccountDeletion({ db, nodes, accounts, twoFactor });
  // Counts from the first request; started and stopped by app.ts (its last counts written on shutdown).
  const notifications = new Notifications({ db, mailer, publicUrl: config.publicUrl, connectPageUrl: config.connectPageUrl, log: log.child({ part: 'notifications' }) });
  const meter = new ApiCallMeter({
    db,
    flushIntervalMs: config.usage.flushIntervalMs,
    batchSize: config.usage.flushBatch,
    log: log.child({ part: 'usage' }),
    metrics,
    notifications,
  });
  const usage = new UsageService({ db, meter });
  const vssBlobs = createBlobStore(config, 'vss');
  const verifier = new SigsVerifier();
  if (verifier.backend === 'openssl') log.warn("VSS signatures are checked with OpenSSL: libsecp256k1's addon (the secp256k1 package) did not load on this platform; each check costs several times more");
  const vss = new VssService({ db, publicUrl: config.vssNodeUrl ?? config.publicUrl, verifier, blobs: vssBlobs, metrics, seal: unlockSeal });
  return { vss, vssBlobs, accounts, signup, notifications, twoFactor, outbox: new Outbox(db), members, transfers, accountDeletion, plans, releases, authenticationRollout: authenticationRolloutOf(db, config), nodes, webhooks, webhookKeys, blobs, backupBlobs, nodeLogBlobs, logExports, certificates, unlockSeal, unlockSealKeys, audit, meter, usage };
}

export type Services = ReturnType<typeof buildServices>;

/**
 * What the operator commands use (operator/commands.ts: OperatorContext), built by the same
 * functions as the server's. `ca` and `unlockSeal` only for the commands that need them: issuing
 * a certificate (pki/ca-store.ts: loadExistingCertificateAuthority) and the unlock seal key's.
 */
export function buildOperatorServices(db: Database, config: Config, log: Logger, ca?: CertificateAuthority, unlockSeal?: UnlockSeal) {
  const audit = auditOf(db, log);
  return {
    audit,
    accounts: accountsOf(db, config),
    signup: signupOf(db, config, log, audit),
    twoFactor: new TwoFactor({ db, audit, passkeys: new Passkeys({ db, publicUrl: config.publicUrl }) }),
    outbox: new Outbox(db),
    plans: plansOf(db),
    releases: releasesOf(db, config),
    authenticationRollout: authenticationRolloutOf(db, config),
    webhookKeys: webhookKeysOf(config),
    certificates: certificatesOf(db, config, ca),
    usage: new UsageService({ db }),
    unlockSealKeys: unlockSeal && unlockSealKeysOf(db, unlockSeal),
  };
}
