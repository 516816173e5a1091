// What each release's RLN build can do, decided here and nowhere else. A release is an image
// version (an RLN commit id or tag, or a devnode-* tag of the stand-in daemon); what its build
// supports follows from the version. The runtime's flags, the node's default settings and the
// API's refusals read this.

export interface ReleaseFeatures {
  /**
   * Continuous state: the daemon takes RLN's fork's `--vss-url` / `--vss-allow-http`, writes every
   * state change to VSS and serves /vssbackupinfo and /vssclearfence (docs/VSS.md). devnode does
   * (devnode/vss/); an RLN build does only once it is the fork with VSS (UTEXO's rgb-lightning-node
   * since its PR #17): list such versions in VSS_RELEASES below when they are published.
   */
  vss: boolean;
}

/** RLN image versions (exact) whose build has the fork's VSS client. */
const VSS_RELEASES: ReadonlySet<string> = new Set<string>([]);

export function releaseFeatures(version: string): ReleaseFeatures {
  return { vss: version.startsWith('devnode-') || VSS_RELEASES.has(version) };
}
