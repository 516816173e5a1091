// What the management API's routes are given.
import type { AccountService } from '../accounts/service.ts';
import type { MemberService } from '../accounts/members.ts';
import type { SignupService } from '../signup/service.ts';
import type { OwnershipTransfers } from '../accounts/ownership-transfer.ts';
import type { AccountDeletion } from '../accounts/account-deletion.ts';
import type { PlanService } from '../accounts/plans.ts';
import type { NodeService } from '../nodes/service.ts';
import type { WebhookService } from '../webhooks/service.ts';
import type { LogExportService } from '../logs/export-service.ts';
import type { CertificateService } from '../pki/client-certificates.ts';
import type { NodeTokenService } from '../nodes/tokens/node-tokens.ts';
import type { NodeUnlocker } from '../nodes/unlock/node-unlocker.ts';
import type { AutoUnlockService } from '../nodes/unlock/auto-unlock.ts';
import type { NodeHealth } from '../nodes/health/node-health.ts';
import type { ContinuousStateView } from '../nodes/health/continuous-state.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import type { BackupService } from '../backups/service.ts';
import type { AuditLog } from '../audit/audit-log.ts';
import type { ApiRateLimits } from './rate-limit-hook.ts';
import type { NodeEventTimeline } from '../events/timeline.ts';
import type { EventHub } from '../events/event-hub.ts';
import type { MemberWatch } from '../events/member-watch.ts';
import type { SseLimits } from './events/sse-stream.ts';
import type { UsageService } from '../usage/service.ts';
import type { ApiCallMeter } from '../usage/api-call-meter.ts';
import type { VssService } from '../vss/vss-service.ts';
import type { PersonNotifications } from './notifications/schemas.ts';

export interface ApiDeps {
  accounts: AccountService;
  /** An account's members and invitations. */
  members: MemberService;
  /** Handing the account from its owner to an admin. */
  transfers: OwnershipTransfers;
  /** The owner deleting the account. */
  accountDeletion: AccountDeletion;
  plans: PlanService;
  /** A person's notification email preferences (GET/PUT /api/notifications). */
  notifications: PersonNotifications;
  /** Self-service sign-up, email verification and password reset; absent: those routes are not served. */
  signup?: SignupService;
  nodes: NodeService;
  /** LDK's VSS protocol for nodes' channel state (docs/VSS.md); absent: not served. */
  vss?: VssService;
  webhooks: WebhookService;
  logExports: LogExportService;
  certificates: CertificateService;
  /** Customers' own node tokens (Biscuits of a node's root key, issue #40). */
  nodeTokens: NodeTokenService;
  unlocker: NodeUnlocker;
  backups: BackupService;
  audit: AuditLog;
  rateLimits: ApiRateLimits;
  /** Usage per month (GET /api/usage). */
  usage: UsageService;
  /** Counts each authenticated request against its account's monthly API calls; absent: no metering. */
  meter?: Pick<ApiCallMeter, 'admit' | 'count'>;
  backupLimits: { maxUploadBytes: number };
  autoUnlock: AutoUnlockService;
  health: NodeHealth;
  /** GET /api/nodes/{id}/continuous-state. */
  continuousState: ContinuousStateView;
  /** Node timelines and the cursors clients hand back. */
  nodeEvents: NodeEventTimeline;
  /** This process's event streams. */
  eventHub: EventHub;
  /** Tells a member's open streams to check their credential again when the member changes. */
  memberWatch: Pick<MemberWatch, 'watch'>;
  /** What a stream client may leave unread before it is disconnected. */
  eventStreamBuffer: SseLimits;
  /** Where log export archives are kept; serves /downloads when its URLs point here. */
  blobs: BlobStore;
  /** Where backups are kept: a store of its own (its own retention), served the same way. */
  backupBlobs: BlobStore;
  /** Answers true once the service has started (the liveness answer of /healthz). */
  isReady: () => boolean;
  /** /readyz: whether this replica should get traffic now, check by check ('ok' or why not). */
  readiness: () => Promise<{ ready: boolean; checks: Record<string, string> }>;
}
