// The node page: status that follows the node's events (node-events.js), the upgrade and locked
// notices with their Upgrade and Unlock buttons, details, build history, recent events, lifecycle
// actions, continuous state (node-continuous-state.js), automatic unlock, webhook, log export and
// backups (node-backups.js).
import { api, connectUrl, nodesListUrl } from '../api.js';
import { dialog, errorNotice, fill, h, lockBadge, notice, runAction, statusBadge, table, time, copyable } from '../dom.js';
import { nodeNotFound } from './not-found.js';
import { backupsCard } from './node-backups.js';
import { nodeEventsCard } from './node-events.js';
import { nodeTokensCard } from './node-tokens.js';
import { continuousStateCard } from './node-continuous-state.js';

const BUSY = new Set(['STARTING', 'IN_PROGRESS', 'DESTROYING']);
const isBusy = (n) => BUSY.has(n.status) || n.builds.some((b) => !b.buildComplete);

export async function nodePage(main, { nodeId, setTitle }) {
  if (!/^[0-9a-f]{32}$/.test(nodeId)) return nodeNotFound(main, nodeId, setTitle);
  let node;
  let latest;
  try {
    node = (await api(`/api/nodes/${nodeId}`)).data;
  } catch (err) {
    if (err.status === 404) return nodeNotFound(main, nodeId, setTitle);
    throw err;
  }
  setTitle(node.name);

  const title = h('h1', {}, node.name);
  const badges = h('div', { class: 'badges', 'aria-live': 'polite', dataset: { testid: 'node-status' } });
  const out = h('div', { class: 'flash' });
  const notices = h('div', { class: 'notices', dataset: { testid: 'notices' } });
  const details = h('dl', { class: 'details' });
  const builds = h('div', { class: 'table-wrap' });

  const act = (label, { cls = 'btn-secondary', run, confirm }) => {
    const button = h('button', { type: 'button', class: `btn ${cls}` }, label);
    button.addEventListener('click', async () => {
      if (confirm && !(await dialog(confirm))) return;
      // The API's "is being ..." message says what started; the page's status says how it goes,
      // so the message goes once the build it announced is over (see render).
      const result = await runAction(button, out, run);
      if (result) out.dataset.transient = 'true';
      await refresh();
    });
    return button;
  };
  const startBtn = act('Start', { run: () => api(`/api/nodes/${nodeId}/start`, { method: 'POST' }) });
  const stopBtn = act('Stop', {
    run: () => api(`/api/nodes/${nodeId}/stop`, { method: 'POST' }),
    confirm: { title: `Stop ${node.name}?`, body: 'The daemon stops and its storage is kept. Starting it again leaves it locked until you unlock it.', confirmLabel: 'Stop node' },
  });
  const destroyBtn = act('Destroy', {
    cls: 'btn-danger-outline',
    run: () => api('/api/nodes', { method: 'DELETE', body: { destroyNodeId: nodeId } }),
    confirm: {
      title: `Destroy ${node.name}?`,
      body: 'The node is stopped and its storage, wallet included, is deleted. This cannot be undone.',
      confirmLabel: 'Destroy node',
      danger: true,
    },
  });
  const connectLink = h('a', { class: 'btn btn-primary', href: connectUrl(nodeId) }, 'Connect');
  // A STORAGE_LOST node: a fresh, empty volume; the owner then initialises it with the wallet's words.
  const recoverStorageBtn = act('Recover', {
    cls: 'btn-primary',
    run: () => api(`/api/nodes/${nodeId}/recover`, { method: 'POST' }),
    confirm: {
      title: `Recover ${node.name}?`,
      body:
        'The node starts again on a fresh, empty volume; whatever is left of the old one is removed. It comes up without a wallet: ' +
        'initialise it with the recovery phrase of the wallet it had (the same words give the same node), then unlock it.',
      confirmLabel: 'Recover node',
    },
  });

  const upgradeBtn = act('Upgrade', {
    cls: 'btn-primary',
    run: () => api(`/api/nodes/${nodeId}/upgrade`, { method: 'POST' }),
    confirm: {
      title: `Upgrade ${node.name}?`,
      body: 'The node restarts on the latest version; this page follows it until it is back. It is locked afterwards: unlock it with its password.',
      confirmLabel: 'Upgrade',
    },
  });
  const unlockBtn = h('button', { type: 'button', class: 'btn btn-primary' }, 'Unlock');
  unlockBtn.addEventListener('click', async () => {
    let answer;
    const done = await dialog({
      title: 'Unlock node',
      body: 'Enter the password the node was initialised with. It is sent to the node and never stored.',
      confirmLabel: 'Unlock',
      fields: [{ name: 'password', label: 'Node password', type: 'password', autocomplete: 'current-password' }],
      onConfirm: async ({ password }) => {
        answer = await api(`/api/nodes/${nodeId}/unlock`, { method: 'POST', body: { password } });
      },
    });
    if (done) {
      // A warning of the service's (another live node runs this wallet) stays in view.
      const warnings = (answer?.warnings ?? []).map((w) => notice('error', h('strong', {}, 'Warning: '), w.message));
      fill(out, notice('ok', 'The node is unlocked.'), warnings);
      await refresh();
    }
  });

  // Automatic unlock: on with the password (the node checks it first), off erases it.
  const autoUnlockState = h('p', { dataset: { testid: 'auto-unlock-state' } });
  const autoUnlockOut = h('div', { class: 'form-out' });
  const autoUnlockOnBtn = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Turn on');
  autoUnlockOnBtn.addEventListener('click', async () => {
    let answer;
    const done = await dialog({
      title: node.autoUnlock ? 'Give automatic unlock another password' : 'Turn automatic unlock on',
      body:
        'The service keeps the password encrypted, with a key that is not in its database, and unlocks this node after every start, ' +
        'upgrade and restart. The node checks the password first: a locked node is unlocked with it.',
      confirmLabel: node.autoUnlock ? 'Save' : 'Turn on',
      fields: [{ name: 'password', label: 'Node password', type: 'password', autocomplete: 'current-password' }],
      onConfirm: async ({ password }) => {
        answer = await api(`/api/nodes/${nodeId}/auto-unlock`, { method: 'PUT', body: { password } });
      },
    });
    if (!done || !answer) return;
    fill(autoUnlockOut, notice('ok', answer.message));
    await refresh();
  });
  const autoUnlockOffBtn = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Turn off');
  autoUnlockOffBtn.addEventListener('click', async () => {
    const sure = await dialog({
      title: 'Turn automatic unlock off?',
      body: 'The kept password is erased. After its next start you unlock the node by hand again.',
      confirmLabel: 'Turn off',
    });
    if (!sure) return;
    await runAction(autoUnlockOffBtn, autoUnlockOut, () => api(`/api/nodes/${nodeId}/auto-unlock`, { method: 'DELETE' }));
    await refresh();
  });
  const renderAutoUnlock = () => {
    const canCheck = node.status === 'RUNNING' && node.initialized;
    fill(
      autoUnlockState,
      node.autoUnlock
        ? [h('strong', {}, 'On. '), 'The service unlocks this node after every start, upgrade and restart.']
        : [h('strong', {}, 'Off. '), canCheck ? 'You unlock the node after every start.' : 'It can be turned on while the node runs, once its wallet exists.'],
    );
    fill(autoUnlockOnBtn, node.autoUnlock ? 'Change password' : 'Turn on');
    autoUnlockOnBtn.hidden = !canCheck;
    autoUnlockOffBtn.hidden = !node.autoUnlock;
  };
  const autoUnlockCard = h(
    'section',
    { class: 'card', dataset: { testid: 'auto-unlock' } },
    h('div', { class: 'card-head' }, h('h2', {}, 'Automatic unlock')),
    h('div', { class: 'card-body stack' }, autoUnlockState, h('div', { class: 'actions' }, autoUnlockOnBtn, autoUnlockOffBtn), autoUnlockOut),
  );

  const initBtn = h('button', { type: 'button', class: 'btn btn-primary' }, 'Initialise');
  initBtn.addEventListener('click', async () => {
    let mnemonic;
    const done = await dialog({
      title: 'Initialise the wallet',
      body: 'The password encrypts the wallet on the node; the service never stores it. At least 8 characters.',
      confirmLabel: 'Initialise',
      fields: [
        { name: 'password', label: 'Password', type: 'password', autocomplete: 'new-password' },
        { name: 'again', label: 'The same password again', type: 'password', autocomplete: 'new-password' },
      ],
      onConfirm: async ({ password, again }) => {
        if (password !== again) throw new Error('The two passwords differ.');
        mnemonic = (await api(`/api/nodes/${nodeId}/init`, { method: 'POST', body: { password } })).data.mnemonic;
      },
    });
    if (!done || !mnemonic) return;
    fill(
      out,
      h(
        'div',
        { class: 'notice notice-warn', role: 'alert', dataset: { testid: 'mnemonic-notice' } },
        h('p', {}, h('strong', {}, 'Write these words down now, in order, and keep them offline. '), 'They are the only way to recover this wallet, and they are not shown again: not by this page, not by the node.'),
        copyable(mnemonic, { label: 'Copy words', testId: 'mnemonic' }),
        h('p', { class: 'small' }, 'The node is still locked: unlock it with the password you just chose.'),
      ),
    );
    await refresh();
  });

  // Recovery: the wallet of a lost node, from its recovery phrase. The phrase goes to the API in
  // the request and nowhere else: the dialog (and its field) is removed once it closes.
  const recoverBtn = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Recover from a recovery phrase');
  recoverBtn.addEventListener('click', async () => {
    let answer;
    const done = await dialog({
      title: 'Recover a wallet from its recovery phrase',
      body:
        'The words of a wallet you had before (12 to 24, separated by spaces) and a new password for it. The node gets the same ' +
        'identity and addresses. If the node the words came from still runs, stop or destroy it first: two live nodes with one ' +
        'wallet can lose its channel funds.',
      confirmLabel: 'Recover',
      fields: [
        { name: 'mnemonic', label: 'Recovery phrase', type: 'textarea' },
        { name: 'password', label: 'Password', type: 'password', autocomplete: 'new-password' },
        { name: 'again', label: 'The same password again', type: 'password', autocomplete: 'new-password' },
      ],
      onConfirm: async ({ mnemonic, password, again }) => {
        if (password !== again) throw new Error('The two passwords differ.');
        answer = await api(`/api/nodes/${nodeId}/init`, { method: 'POST', body: { password, mnemonic: mnemonic.trim() } });
      },
    });
    if (!done || !answer) return;
    fill(
      out,
      h(
        'div',
        { class: 'notice notice-ok', role: 'status', dataset: { testid: 'recovered-notice' } },
        h('p', {}, h('strong', {}, 'The wallet is recovered. '), answer.message),
      ),
    );
    await refresh();
  });

  const renderNotices = () => {
    const items = [];
    // An exported node never runs here again: no upgrade to offer, only destroy.
    const alive = node.status !== 'DESTROYED' && node.status !== 'DESTROYING' && node.status !== 'EXPORTED' && node.status !== 'STORAGE_LOST';
    if (node.status === 'STORAGE_LOST') {
      items.push(
        h(
          'div',
          { class: 'notice notice-error notice-action', role: 'alert', dataset: { testid: 'storage-lost-notice' } },
          h(
            'div',
            {},
            h('strong', {}, 'Storage lost. '),
            "This node's volume is gone, so its daemon is stopped. Recover it to start it on a fresh volume, then initialise it with its wallet's recovery phrase; or destroy it.",
          ),
          recoverStorageBtn,
        ),
      );
    } else if (node.status === 'EXPORTED') {
      items.push(notice('info', h('strong', {}, 'Exported. '), "This node's wallet left with its final backup (see its Backups card); it never runs here again. Destroy it when you have the file."));
    } else if (node.status === 'IN_PROGRESS') {
      const b = node.builds.at(-1);
      items.push(notice('info', h('strong', {}, 'Upgrade in progress. '), `The node is moving to version ${b?.imageVersion ?? 'the latest'}; this page updates by itself.`));
    } else if (alive && latest && node.rln_commit_id !== latest) {
      items.push(
        h(
          'div',
          { class: 'notice notice-info notice-action', role: 'status', dataset: { testid: 'upgrade-notice' } },
          h('div', {}, h('strong', {}, 'An upgrade is available. '), 'This node runs ', h('code', {}, node.rln_commit_id), '; the latest version is ', h('code', {}, latest), '.'),
          upgradeBtn,
        ),
      );
    }
    if (node.status === 'RUNNING' && node.locked && node.initialized) {
      items.push(
        h(
          'div',
          { class: 'notice notice-warn notice-action', role: 'status', dataset: { testid: 'locked-notice' } },
          h('div', {}, h('strong', {}, 'This node is locked. '), 'Every start and upgrade locks it. Unlock it with its password to use it.'),
          unlockBtn,
        ),
      );
    }
    if (node.status === 'RUNNING' && !node.initialized) {
      items.push(
        h(
          'div',
          { class: 'notice notice-info notice-action', role: 'status', dataset: { testid: 'init-notice' } },
          h('div', {}, h('strong', {}, 'The wallet is not initialised yet. '), 'Choose its password to create it, or recover a wallet you had from its recovery phrase; you unlock the node with the password after every start.'),
          h('div', { class: 'actions' }, initBtn, recoverBtn),
        ),
      );
    }
    const last = node.builds.at(-1);
    if (last?.buildStatus === 'FAILURE') {
      items.push(notice('error', h('strong', {}, `The last ${last.action} failed. `), last.error ?? 'See the build history.'));
    }
    if (node.storage && node.status !== 'DESTROYED' && usedShare(node.storage) > NEARLY_FULL) {
      items.push(
        notice(
          'warn',
          h('strong', {}, 'Storage is nearly full. '),
          `Only ${bytes(node.storage.availableBytes)} of ${bytes(node.storage.capacityBytes)} is free. Download and delete backups kept on the node, or ask the operator for more room.`,
        ),
      );
    }
    if (node.vss && node.status !== 'DESTROYED' && node.vss.usedBytes > node.vss.softLimitBytes) {
      const past = notice(
        'warn',
        h('strong', {}, 'The channel state store is past its limit. '),
        `It holds ${bytes(node.vss.usedBytes)}, more than the ${bytes(node.vss.softLimitBytes)} planned for a node. Writes are still accepted, so the channels keep working; the operator has been alerted.`,
      );
      past.dataset.testid = 'vss-limit-notice';
      items.push(past);
    }
    if (node.status === 'DESTROYED') items.push(notice('info', 'This node was destroyed; its storage is deleted and the record is kept for reference.'));
    fill(notices, items);
  };

  const renderDetails = () => {
    const row = (label, value) => [h('dt', {}, label), h('dd', {}, value)];
    fill(
      details,
      row('Node id', h('code', {}, node.nodeId)),
      row('Network', h('span', { class: 'pill' }, node.network)),
      row('Version', h('code', { dataset: { testid: 'node-version' } }, node.rln_commit_id)),
      row('Invoke URL', copyable(node.invoke_url)),
      row('Peer address', copyable(`${node.peerDNS}:${node.peerPort}`)),
      row('Wallet', node.initialized ? 'Initialised' : 'Not initialised'),
      row('Storage', storageUse(node.storage)),
      ...(node.vss ? row('Channel state (VSS)', vssUse(node.vss)) : []),
      row('Created', time(node.createdAt)),
      row('Updated', time(node.updatedAt)),
    );
  };

  const renderBuilds = () => {
    fill(
      builds,
      table(
        'builds',
        ['#', 'Action', 'Status', 'Version', 'Started', 'Finished'],
        [...node.builds].reverse().map((b) => ({
          cells: [
            b.buildNumber,
            b.action,
            [statusBadge(b.buildStatus), b.error ? h('div', { class: 'small muted' }, b.error) : null],
            h('code', {}, b.imageVersion),
            time(b.timestamp),
            b.finishedAt ? time(b.finishedAt) : 'running…',
          ],
        })),
      ),
    );
  };

  const render = () => {
    fill(title, node.name);
    fill(badges, statusBadge(node.status), node.status === 'DESTROYED' ? null : lockBadge(node.locked), h('span', { class: 'pill' }, node.network));
    const busy = isBusy(node);
    const gone = node.status === 'DESTROYED' || node.status === 'DESTROYING';
    startBtn.hidden = !(node.status === 'PAUSED' || node.status === 'FAILED');
    stopBtn.hidden = gone || node.status === 'PAUSED' || node.status === 'EXPORTED' || node.status === 'STORAGE_LOST';
    destroyBtn.hidden = gone;
    for (const b of [startBtn, stopBtn, destroyBtn, upgradeBtn, recoverStorageBtn]) b.disabled = busy;
    connectLink.hidden = gone || node.status === 'EXPORTED' || node.status === 'STORAGE_LOST';
    if (!busy && out.dataset.transient) {
      delete out.dataset.transient;
      fill(out);
    }
    renderNotices();
    renderDetails();
    renderBuilds();
    renderAutoUnlock();
  };

  // Continuous state (issue #43): its own card, reloaded as the node changes.
  const continuous = continuousStateCard(nodeId);
  let timer;
  let soon;
  // Every event of the node reloads it at once (a burst of them, once).
  const events = nodeEventsCard(nodeId, { onEvent: () => (soon ??= setTimeout(() => ((soon = undefined), refresh()), 50)) });
  window.addEventListener('rlnc:session-expired', () => events.stop());
  const refresh = async () => {
    clearTimeout(timer);
    try {
      const [n, l] = await Promise.all([api(`/api/nodes/${nodeId}`), api('/api/nodes/latest-rln-image').catch(() => ({ data: latest }))]);
      node = n.data;
      latest = l.data;
      render();
      continuous.update(node);
    } catch (err) {
      if (err.status === 404) {
        events.stop();
        return nodeNotFound(main, nodeId, setTitle);
      }
      if (err.status === 401) return;
      fill(out, errorNotice(err));
    }
    // The event stream says when the node changes; polling stays as a slow fallback (and notices
    // an ended session). Without the stream: follow a running build closely, otherwise look now
    // and then for outside changes (an automatic upgrade, a new release).
    timer = setTimeout(refresh, events.live ? 10_000 : isBusy(node) ? 1000 : 4000);
  };

  fill(
    main,
    h('nav', { class: 'breadcrumb', 'aria-label': 'Breadcrumb' }, h('a', { href: nodesListUrl() }, 'Nodes'), ' / ', h('span', {}, node.name)),
    h('div', { class: 'page-head row' }, h('div', {}, title, badges), h('div', { class: 'toolbar' }, connectLink, startBtn, stopBtn, destroyBtn)),
    out,
    notices,
    h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', {}, 'Details')), h('div', { class: 'card-body' }, details)),
    h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', {}, 'Build history')), h('div', { class: 'card-body' }, builds)),
    events.card,
    continuous.card,
    autoUnlockCard,
    h('div', { class: 'two-col' }, webhookCard(nodeId, node), logsCard(nodeId)),
    backupsCard(nodeId, { onNodeChanged: () => refresh() }),
    nodeTokensCard(nodeId),
  );
  await refresh();
  await events.start();
}

function webhookCard(nodeId, node) {
  const out = h('div', { class: 'form-out' });
  const input = h('input', { id: 'webhook-url', type: 'url', placeholder: 'https://example.com/hooks/rln', autocomplete: 'off' });
  input.value = node.settings?.webhookUrl ?? '';
  const save = h('button', { type: 'submit', class: 'btn btn-secondary' }, 'Save');
  const form = h(
    'form',
    { class: 'stack', novalidate: true },
    h('label', { class: 'field', for: 'webhook-url' }, h('span', {}, 'Webhook URL'), input),
    h('p', { class: 'small muted' }, 'Signed status events are sent here. Leave empty to send none.'),
    h('div', { class: 'actions' }, save),
    out,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const url = input.value.trim();
    runAction(save, out, async () => {
      const r = await api(`/api/nodes/${nodeId}/settings`, { method: 'POST', body: { settings: { webhookUrl: url } } });
      return { message: r.message ?? 'Saved' };
    });
  });
  return h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', {}, 'Webhook')), h('div', { class: 'card-body' }, form));
}

function logsCard(nodeId) {
  const out = h('div', { class: 'form-out', dataset: { testid: 'log-export' } });
  const button = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Export logs');
  button.addEventListener('click', async () => {
    button.disabled = true;
    fill(out, h('p', { class: 'muted' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), ' Preparing the export…'));
    try {
      const { taskId } = await api(`/api/nodes/${nodeId}/logs`, { method: 'POST' });
      const deadline = Date.now() + 5 * 60_000;
      for (;;) {
        const r = await api(`/api/nodes/${nodeId}/logs?taskId=${encodeURIComponent(taskId)}`);
        if (r.status === 'FAILED') throw Object.assign(new Error(r.error?.message ?? 'the export failed'), { code: r.error?.code, title: 'The export failed.' });
        const urls = Array.isArray(r.data) ? r.data : [];
        if (urls.length > 0) {
          fill(
            out,
            notice('ok', 'The export is ready.', r.expiresAt ? [' The links expire ', time(r.expiresAt), '.'] : ' The links expire after a while.'),
            h('ul', { class: 'links' }, urls.map((u, i) => h('li', {}, h('a', { href: u, download: '', rel: 'noreferrer' }, fileName(u, i))))),
          );
          break;
        }
        if (Date.now() > deadline) throw new Error('the export is taking long; try again later');
        await new Promise((r) => setTimeout(r, 1000));
      }
    } catch (err) {
      fill(out, errorNotice(err));
    } finally {
      button.disabled = false;
    }
  });
  return h(
    'section',
    { class: 'card' },
    h('div', { class: 'card-head' }, h('h2', {}, 'Logs')),
    h('div', { class: 'card-body stack' }, h('p', { class: 'small muted' }, "Export the daemon's logs as files to download."), h('div', { class: 'actions' }, button), out),
  );
}

function fileName(url, i) {
  try {
    const last = new URL(url, location.href).pathname.split('/').filter(Boolean).at(-1);
    return last ? decodeURIComponent(last) : `log file ${i + 1}`;
  } catch {
    return `log file ${i + 1}`;
  }
}

/** The share of the volume in use above which the page warns (the operators' alert is at the same mark). */
const NEARLY_FULL = 0.9;
const usedShare = (storage) => (storage.capacityBytes > 0 ? 1 - storage.availableBytes / storage.capacityBytes : 0);

function bytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)} ${units[i]}`;
}

/** What the node's VSS store holds as last measured, beside its soft limit (docs/VSS.md). */
function vssUse(vss) {
  const past = vss.usedBytes > vss.softLimitBytes;
  return h(
    'span',
    { dataset: { testid: 'node-vss' } },
    `${bytes(vss.usedBytes)} of ${bytes(vss.softLimitBytes)} (soft limit${past ? ': past it, writes still accepted' : ''}) `,
    h('span', { class: 'small muted' }, ['as of ', time(vss.measuredAt)]),
  );
}

/** The node's storage use as last measured: what its files take, and the room left on its volume. */
function storageUse(storage) {
  if (!storage) return h('span', { class: 'muted', dataset: { testid: 'node-storage' } }, 'Not measured yet (measured while the node runs)');
  return h(
    'span',
    { dataset: { testid: 'node-storage' } },
    `${bytes(storage.usedBytes)} used; ${bytes(storage.availableBytes)} free of ${bytes(storage.capacityBytes)} (${Math.round(usedShare(storage) * 100)}% full) `,
    h('span', { class: 'small muted' }, ['as of ', time(storage.measuredAt)]),
  );
}
