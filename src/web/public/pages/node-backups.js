// The node page's Backups card: back the node up (its password asked for in a dialog, sent once,
// never kept), follow the backup until it has finished, list the node's backups and download one
// through a fresh link.
import { api } from '../api.js';
import { dialog, errorNotice, fill, h, notice, table, time } from '../dom.js';

const size = (bytes) =>
  bytes === null || bytes === undefined ? '' : bytes < 1024 ? `${bytes} B` : bytes < 1024 ** 2 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 ** 2).toFixed(1)} MiB`;

export function backupsCard(nodeId, { onNodeChanged }) {
  const out = h('div', { class: 'form-out', dataset: { testid: 'backup-out' } });
  const list = h('div', { class: 'table-wrap', dataset: { testid: 'backups' } });
  const create = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Back up now');

  const load = async () => {
    try {
      const { backups } = await api(`/api/nodes/${nodeId}/backups?limit=20`);
      if (backups.length === 0) return fill(list, h('p', { class: 'small muted' }, 'No backups yet.'));
      fill(
        list,
        table(
          'backup-table',
          ['Made', 'Status', 'Size', ''],
          backups.map((b) => ({
            attrs: { dataset: { backupId: b.backupId } },
            cells: [
              time(b.createdAt),
              b.status === 'FAILED' ? h('span', { title: b.error?.message ?? '' }, 'Failed: ', b.error?.code ?? '') : b.status === 'SUCCEEDED' ? 'Ready' : 'Running…',
              size(b.sizeBytes),
              b.status === 'SUCCEEDED' ? downloadButton(nodeId, b.backupId, out) : '',
            ],
          })),
        ),
      );
    } catch (err) {
      fill(list, errorNotice(err));
    }
  };

  create.addEventListener('click', async () => {
    let started;
    const done = await dialog({
      title: 'Back up the node',
      body:
        'The node encrypts the backup with its wallet password. An unlocked node is locked for a moment and unlocked again ' +
        'with the same password. The password is sent to the node and never stored.',
      confirmLabel: 'Back up',
      fields: [{ name: 'password', label: 'Node password', type: 'password', autocomplete: 'current-password' }],
      onConfirm: async ({ password }) => {
        started = await api(`/api/nodes/${nodeId}/backups`, { method: 'POST', body: { password } });
      },
    });
    if (!done || !started) return;
    create.disabled = true;
    fill(out, h('p', { class: 'muted' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), ' Backing up…'));
    try {
      let backup = started;
      while (backup.status === 'IN_PROGRESS') {
        await new Promise((r) => setTimeout(r, 700));
        backup = await api(`/api/nodes/${nodeId}/backups/${backup.backupId}`);
      }
      if (backup.status === 'FAILED') {
        throw Object.assign(new Error(backup.error?.message ?? 'the backup failed'), { code: backup.error?.code, title: 'The backup failed.' });
      }
      fill(out, notice('ok', `The backup is ready (${size(backup.sizeBytes)}).`), backup.unlockError ? notice('warn', backup.unlockError) : null);
    } catch (err) {
      fill(out, errorNotice(err));
    } finally {
      create.disabled = false;
      await Promise.all([load(), onNodeChanged()]);
    }
  });

  void load();
  return h(
    'section',
    { class: 'card' },
    h('div', { class: 'card-head' }, h('h2', {}, 'Backups')),
    h(
      'div',
      { class: 'card-body stack' },
      h('p', { class: 'small muted' }, "The node's wallet and storage, encrypted by the node with its password. Restore one into a new node."),
      h('div', { class: 'actions' }, create),
      out,
      list,
    ),
  );
}

/** Asks for a fresh link at the moment of the click (links expire), then follows it. */
function downloadButton(nodeId, backupId, out) {
  const button = h('button', { type: 'button', class: 'btn btn-secondary btn-small', dataset: { testid: 'backup-download' } }, 'Download');
  button.addEventListener('click', async () => {
    try {
      const { downloadUrl } = await api(`/api/nodes/${nodeId}/backups/${backupId}`);
      const a = h('a', { href: downloadUrl, download: '', rel: 'noreferrer' });
      document.body.append(a);
      a.click();
      a.remove();
    } catch (err) {
      fill(out, errorNotice(err));
    }
  });
  return button;
}
