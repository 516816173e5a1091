// Whether a node's volume is gone, from its claim alone (the reconcile loop asks every pass, so the
// claim comes from the runtime's watch cache). Only the claim is looked at, never the pod: a pod
// waiting to be scheduled (a busy cluster) has a claim waiting with it (phase Pending under a
// WaitForFirstConsumer storage class), which is no loss.
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';

/**
 * Why the claim says the node's volume is gone; undefined while it is there (bound or waiting to
 * bind). `podLives`: the node's pod exists and is not being deleted. Such a pod's claim cannot be gone
 * (pvc-protection keeps it while the pod lives), so a claim missing from the cache beside it is one
 * the watch has not delivered yet, not a deleted one.
 */
export function claimLoss(claim: V1PersistentVolumeClaim | undefined, podLives = false): string | undefined {
  if (!claim) return podLives ? undefined : 'its volume claim was deleted';
  // pvc-protection keeps a deleted claim while its pod runs; it goes with the pod, and nothing brings it back.
  if (claim.metadata?.deletionTimestamp) return 'its volume claim is being deleted';
  // The claim's persistent volume was deleted under it.
  if (claim.status?.phase === 'Lost') return 'its volume claim lost its persistent volume';
  return undefined;
}
