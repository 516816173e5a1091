// The node page's Recent events card, and how the page follows the node: the recent history from
// GET /api/nodes/{id}/events, then the event stream (GET /api/events/stream, an EventSource that
// resumes by itself with Last-Event-ID), keeping this node's events. Each one is added to the list
// and handed to `onEvent`, so the page reloads the node at once instead of polling for it.
import { api, config } from '../api.js';
import { fill, h, time } from '../dom.js';

// The stream names each message after its event type; an EventSource only hands out the names it
// listens for. The service hands the page the list (ui-routes.ts), so a new type is never missed.
const EVENT_TYPES = config.eventTypes;
const SHOWN = 15;
// After the stream was refused or lost for good (a cap, a restart in between), try again this late.
const RECONNECT_MS = 30_000;

function describe(e) {
  const d = e.details ?? {};
  switch (e.eventType) {
    case 'NODE_STATUS_UPDATED':
      return ['Status', d.previousStatus ? `${d.previousStatus} → ${d.status}` : d.status];
    case 'NODE_LOCKED':
      return ['Locked', ''];
    case 'NODE_UNLOCKED':
      return ['Unlocked', ''];
    case 'NODE_UPGRADE_AVAILABLE':
      return ['Upgrade available', d.version ?? ''];
    case 'NODE_UPGRADE_COMPLETED':
      return ['Upgraded', `${d.fromVersion} → ${d.toVersion}`];
    case 'NODE_UPGRADE_FAILED':
      return ['Upgrade failed', d.reason ?? ''];
    case 'NODE_AUTO_UNLOCK_DISABLED':
      return ['Automatic unlock turned off', d.reason ?? ''];
    case 'LOG_EXPORT_READY':
      return ['Log export ready', ''];
    case 'NODE_BACKUP_COMPLETED':
      return ['Backup completed', d.unlockError ? `left locked: ${d.unlockError}` : ''];
    case 'NODE_BACKUP_FAILED':
      return ['Backup failed', d.reason ?? ''];
    case 'NODE_EXPORTED':
      return ['Exported: stopped here for good', d.backupId ? `backup ${d.backupId}` : ''];
    case 'NODE_STORAGE_LOST':
      return ['Storage lost: recover the node', d.reason ?? ''];
    case 'NODE_IDENTITY_SHARED':
      return ['Wallet runs on another node too', [...(d.sharedWith ?? []), ...(d.otherAccounts ? [`${d.otherAccounts} of another account`] : [])].join(', ')];
    case 'TEST':
      return ['Test event', d.message ?? ''];
    default:
      return [e.eventType, ''];
  }
}

export function nodeEventsCard(nodeId, { onEvent }) {
  const list = h('ol', { class: 'events', dataset: { testid: 'node-events' } });
  let events = [];
  let source;
  let retry;
  let lastId;
  let stopped = false;

  const render = () =>
    fill(
      list,
      events.length === 0
        ? h('li', { class: 'small muted' }, 'Nothing has happened yet.')
        : events.map((e) => {
            const [label, detail] = describe(e);
            return h('li', { dataset: { eventType: e.eventType } }, h('span', { class: 'small muted' }, time(e.eventTimestamp)), h('strong', {}, label), detail ? h('span', {}, detail) : null);
          }),
    );

  const merge = (more) => {
    const byId = new Map([...events, ...more].map((e) => [e.eventId, e]));
    events = [...byId.values()].sort((a, b) => (a.eventTimestamp < b.eventTimestamp ? 1 : a.eventTimestamp > b.eventTimestamp ? -1 : 0)).slice(0, SHOWN);
    render();
  };
  const load = async () => merge((await api(`/api/nodes/${nodeId}/events?order=newest&limit=${SHOWN}`)).events);

  const connect = (after) => {
    if (stopped) return;
    source = new EventSource(after ? `/api/events/stream?after=${encodeURIComponent(after)}` : '/api/events/stream');
    const onMessage = (m) => {
      lastId = m.lastEventId || lastId;
      const e = JSON.parse(m.data);
      if (e.nodeId !== nodeId) return;
      merge([e]);
      onEvent(e);
    };
    for (const type of EVENT_TYPES) source.addEventListener(type, onMessage);
    // Once the stream is in place, whatever happened before it is in the timeline: look once more,
    // so nothing between the first look and the stream is missed.
    source.addEventListener('open', () => void load().catch(() => {}));
    // Lost connections are retried by the EventSource itself; a refusal (401, 429, 503) closes it.
    source.addEventListener('error', () => {
      if (source.readyState !== EventSource.CLOSED || stopped) return;
      retry = setTimeout(() => connect(lastId), RECONNECT_MS);
    });
  };

  const card = h(
    'section',
    { class: 'card' },
    h('div', { class: 'card-head' }, h('h2', {}, 'Recent events')),
    h('div', { class: 'card-body' }, list),
  );

  return {
    card,
    /** True while the stream is open: the page then only polls now and then, as a fallback. */
    get live() {
      return source?.readyState === EventSource.OPEN;
    },
    async start() {
      await load().catch(() => render());
      connect();
    },
    stop() {
      stopped = true;
      clearTimeout(retry);
      source?.close();
    },
  };
}
