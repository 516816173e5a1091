// The status classes a gateway request is counted under: `2xx` rather than the status itself, so
// the label has a handful of values whatever the nodes answer.

export const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx', 'other'] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

/** Where `status` falls in STATUS_CLASSES; `other` for anything outside 100-599 (node:http allows up to 999). */
export function statusClassIndex(status: number): number {
  return status >= 100 && status < 600 ? Math.floor(status / 100) - 1 : STATUS_CLASSES.length - 1;
}

export const statusClass = (status: number): StatusClass => STATUS_CLASSES[statusClassIndex(status)]!;
