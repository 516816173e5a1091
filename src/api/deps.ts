// What the management API's routes are given.
import type { AccountService } from '../accounts/service.ts';
import type { NodeService } from '../nodes/service.ts';

export interface ApiDeps {
  accounts: AccountService;
  nodes: NodeService;
  /** Answers true once the service is ready to take requests. */
  isReady: () => boolean;
}
