// The exact bytes a webhook carries. Stored payloads come back from jsonb with their keys
// reordered, so the envelope is rebuilt in its documented order: the same event always yields the
// same body, on every attempt and every redelivery.
export function serializeEnvelope(payload: Record<string, unknown>): string {
  const { eventType, eventTimestamp, nodeId, details, ...rest } = payload;
  const orderedDetails =
    details && typeof details === 'object' ? { nodeId: (details as Record<string, unknown>).nodeId, ...(details as object) } : details;
  return JSON.stringify({ eventType, eventTimestamp, nodeId, details: orderedDetails, ...rest });
}
