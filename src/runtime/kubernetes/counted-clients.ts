// The official client's Watch and Exec, counted (api-requests.ts): they open their connections
// themselves, out of the runtime's sight.
import { Exec, Watch } from '@kubernetes/client-node';
import type { CountRequest } from './api-requests.ts';

/** A Watch whose every (re)opening is counted: the informers reopen theirs on their own. */
export class CountedWatch extends Watch {
  constructor(config: ConstructorParameters<typeof Watch>[0], private readonly count: CountRequest) {
    super(config);
  }

  override watch(...args: Parameters<Watch['watch']>): ReturnType<Watch['watch']> {
    this.count('watch');
    return super.watch(...args);
  }
}

/** Exec opens a connection the API server authorizes as `create` on pods/exec. */
export class CountedExec extends Exec {
  constructor(config: ConstructorParameters<typeof Exec>[0], private readonly count: CountRequest) {
    super(config);
  }

  override exec(...args: Parameters<Exec['exec']>): ReturnType<Exec['exec']> {
    this.count('create');
    return super.exec(...args);
  }
}
