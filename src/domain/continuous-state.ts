// The continuousState node setting (issue #43): on by default where the node's release supports
// it (domain/release-features.ts), refused where it does not.
import { AppError } from '../errors.ts';
import { releaseFeatures } from './release-features.ts';

/** The setting for a node on `version`: the asked value, or the release's default; asking for it where unsupported is a 400. */
export function continuousStateFor(version: string, asked: boolean | undefined): boolean {
  const supported = releaseFeatures(version).vss;
  if (asked === true && !supported) {
    throw new AppError('continuous_state_unsupported', `continuous state needs a release whose RLN build writes to VSS; ${version} does not`);
  }
  return asked ?? supported;
}
