// The node page's Continuous state card (issue #43): where the node's state stands in the
// service's VSS: the last state write and the store's size (the service's own facts) and the
// writes the daemon holds that VSS has not taken yet (its /vssbackupinfo, asked by the service).
// Read from GET /api/nodes/{id}/continuous-state when the node's status or lock changes, and at
// most every RELOAD_MS otherwise: each read asks the daemon.
import { api } from '../api.js';
import { errorNotice, fill, h, notice, time } from '../dom.js';

const RELOAD_MS = 15_000;

const size = (n) => (n < 1024 ? `${n} B` : n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KiB` : n < 1024 ** 3 ? `${(n / 1024 ** 2).toFixed(1)} MiB` : `${(n / 1024 ** 3).toFixed(1)} GiB`);

export function continuousStateCard(nodeId) {
  const body = h('div', { class: 'card-body', dataset: { testid: 'continuous-state' } }, h('p', { class: 'small muted' }, 'Loading…'));
  const card = h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', {}, 'Continuous state')), body);
  let seen = '';
  let loadedAt = 0;

  const load = async () => {
    loadedAt = Date.now();
    try {
      render((await api(`/api/nodes/${nodeId}/continuous-state`)).data);
    } catch (err) {
      if (err.status !== 401) fill(body, errorNotice(err));
    }
  };

  const render = (state) => {
    const row = (label, value, testId) => [h('dt', {}, label), h('dd', { dataset: { testid: testId } }, value)];
    if (!state.enabled && !state.store) {
      return fill(body, h('p', { class: 'muted' }, 'Off: the node keeps its state on its volume only. Take backups to keep it elsewhere.'));
    }
    const { store, daemon } = state;
    const pending = daemon.pendingWrites;
    fill(
      body,
      pending > 0 ?
        notice(
          'warn',
          h('strong', {}, `${pending} state ${pending === 1 ? 'write is' : 'writes are'} not in VSS yet. `),
          'The node sends them again with its next change; until then they are on its volume only. The operator is alerted if it lasts.',
        )
      : null,
      h(
        'dl',
        { class: 'details' },
        ...row('Writes to VSS', state.enabled ? 'On' : 'Off (from the next start)', 'cs-enabled'),
        ...row('Last write', store?.lastWriteAt ? time(store.lastWriteAt) : 'None yet', 'cs-last-write'),
        ...row('Size', store ? `${size(store.bytes)} in ${store.keys} ${store.keys === 1 ? 'key' : 'keys'}` : 'No store yet', 'cs-size'),
        ...row('Pending writes', daemon.checked && pending !== null ? String(pending) : h('span', { class: 'muted' }, `Unknown: ${daemon.reason}`), 'cs-pending'),
      ),
    );
  };

  /** Called with the node each time the page has it: reloads on a change of what the daemon can answer, else now and then. */
  const update = (node) => {
    const key = `${node.status}/${node.locked}/${node.continuousState}`;
    if (key === seen && Date.now() - loadedAt < RELOAD_MS) return;
    seen = key;
    void load();
  };

  return { card, update };
}
