// The account: its plan with this month's use, its members (role changes and removal for admins
// and the owner), pending invitations with the invite form (the link is shown once), and node
// time per day, and the signed-in person's sessions (account-security.js); leaving, handing over and deleting (account-ownership.js). GET /api/account and GET /api/usage may not exist on every service version yet:
// a 404 shows a neutral placeholder instead of an error.
import { api, currentUser } from '../api.js';
import { copyable, dialog, errorNotice, fill, h, notice, onSubmit, runAction, table, time } from '../dom.js';
import { usageChart } from './usage-chart.js';
import { securitySection } from './account-security.js';
import { ownershipSection } from './account-ownership.js';

const INVITABLE = ['viewer', 'developer', 'admin'];
const ROLE_HELP = {
  viewer: 'reads only',
  developer: 'nodes, tokens, certificates, backups',
  admin: 'also members and invitations',
  owner: 'everything, the plan too',
};

/** GET that answers null for a route this service does not have (yet). */
async function optional(path) {
  try {
    return await api(path);
  } catch (err) {
    if (err.status === 404) return null;
    throw err;
  }
}

const limitText = (used, limit) => (limit === null || limit === undefined ? `${used} (unlimited)` : `${used} of ${limit}`);

export async function accountPage(main, { setTitle }) {
  setTitle('Account');
  const planBody = h('div', { class: 'card-body' }, h('p', { class: 'loading' }, 'Loading…'));
  const membersList = h('div', { class: 'table-wrap' }, h('p', { class: 'loading' }, 'Loading members…'));
  const membersOut = h('div', { class: 'form-out' });
  const invitationsList = h('div', { class: 'table-wrap' });
  const inviteOut = h('div', { class: 'form-out', dataset: { testid: 'new-invitation' } });
  const usageBody = h('div', { class: 'card-body' }, h('p', { class: 'loading' }, 'Loading…'));
  const inviteCard = h('section', { class: 'card', hidden: true });
  let manages = false;
  const security = securitySection();
  const ownership = ownershipSection();

  const showPlan = async () => {
    let account;
    try {
      account = await optional('/api/account');
    } catch (err) {
      return fill(planBody, errorNotice(err));
    }
    if (!account) return fill(planBody, h('p', { class: 'muted', dataset: { testid: 'plan-placeholder' } }, 'Plan details are not available on this service yet.'));
    const { plan, usage } = account;
    fill(
      planBody,
      h(
        'dl',
        { class: 'details', dataset: { testid: 'plan' } },
        h('dt', {}, 'Plan'),
        h('dd', {}, h('strong', {}, plan.name), plan.autoUpgrade ? h('span', { class: 'muted' }, ' · nodes upgraded automatically') : null),
        h('dt', {}, 'Nodes'),
        h('dd', {}, limitText(usage?.nodes?.used ?? '—', plan.maxNodes)),
        h('dt', {}, `API calls in ${usage?.month ?? 'this month'}`),
        h('dd', {}, limitText(usage?.apiCalls?.used ?? '—', plan.apiCallsPerMonth)),
        h('dt', {}, 'Users'),
        h('dd', {}, limitText(usage?.users?.used ?? '—', plan.maxUsers)),
        h('dt', {}, 'Your role'),
        h('dd', {}, account.role),
      ),
    );
  };

  const showMembers = async () => {
    let members;
    try {
      members = (await api('/api/account/members')).members;
    } catch (err) {
      return fill(membersList, errorNotice(err));
    }
    const me = members.find((m) => m.userId === currentUser?.id);
    await ownership.load(members);
    manages = me?.role === 'owner' || me?.role === 'admin';
    inviteCard.hidden = !manages;
    fill(
      membersList,
      table(
        'members',
        ['Email', 'Role', 'Joined', ''],
        members.map((m) => ({
          attrs: { dataset: { userId: m.userId } },
          cells: [
            h('strong', {}, m.email, m.userId === currentUser?.id ? h('span', { class: 'muted' }, ' (you)') : null),
            manages && m.role !== 'owner' ? roleSelect(m) : h('span', { class: 'badge badge-info', title: ROLE_HELP[m.role] }, m.role),
            time(m.joinedAt),
            manages && m.role !== 'owner' ? removeButton(m) : null,
          ],
        })),
      ),
    );
  };

  const roleSelect = (m) => {
    const select = h('select', { 'aria-label': `Role of ${m.email}`, dataset: { testid: 'member-role' } }, INVITABLE.map((r) => h('option', { value: r, selected: r === m.role }, `${r} — ${ROLE_HELP[r]}`)));
    select.addEventListener('change', async () => {
      await runAction(select, membersOut, () => api(`/api/account/members/${m.userId}`, { method: 'PATCH', body: { role: select.value } }));
      await showMembers();
    });
    return select;
  };

  const removeButton = (m) => {
    const button = h('button', { type: 'button', class: 'btn btn-small btn-danger-outline' }, 'Remove');
    button.addEventListener('click', async () => {
      const ok = await dialog({
        title: `Remove ${m.email}?`,
        body: 'Their API tokens, sessions and client certificates stop working at once. The nodes stay the account’s.',
        confirmLabel: 'Remove',
        danger: true,
      });
      if (!ok) return;
      await runAction(button, membersOut, () => api(`/api/account/members/${m.userId}`, { method: 'DELETE' }));
      await showMembers();
    });
    return button;
  };

  const showInvitations = async () => {
    if (!manages) return fill(invitationsList);
    let invitations;
    try {
      invitations = (await api('/api/account/invitations')).invitations;
    } catch (err) {
      return fill(invitationsList, errorNotice(err));
    }
    if (invitations.length === 0) return fill(invitationsList, h('p', { class: 'muted' }, 'No pending invitations.'));
    fill(
      invitationsList,
      table(
        'invitations',
        ['Email', 'Role', 'Expires', ''],
        invitations.map((i) => {
          const revoke = h('button', { type: 'button', class: 'btn btn-small btn-danger-outline' }, 'Revoke');
          revoke.addEventListener('click', async () => {
            await runAction(revoke, inviteOut, () => api(`/api/account/invitations/${i.id}`, { method: 'DELETE' }));
            await showInvitations();
          });
          return { attrs: { dataset: { invitationId: i.id } }, cells: [i.email, i.role, time(i.expiresAt), revoke] };
        }),
      ),
    );
  };

  const email = h('input', { id: 'invite-email', type: 'email', autocomplete: 'off', required: true, placeholder: 'colleague@example.com' });
  const role = h('select', { id: 'invite-role' }, INVITABLE.map((r) => h('option', { value: r, selected: r === 'developer' }, `${r} — ${ROLE_HELP[r]}`)));
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Invite');
  const form = h(
    'form',
    { class: 'grid-form', novalidate: true },
    h('label', { class: 'field', for: 'invite-email' }, h('span', {}, 'Email'), email),
    h('label', { class: 'field', for: 'invite-role' }, h('span', {}, 'Role'), role),
    h('div', { class: 'actions wide' }, submit),
    h('div', { class: 'wide' }, inviteOut),
  );
  onSubmit(form, submit, inviteOut, async () => {
    const r = await api('/api/account/invitations', { method: 'POST', body: { email: email.value, role: role.value } });
    fill(
      inviteOut,
      r.emailed
        ? notice('ok', h('strong', {}, `Invitation for ${r.email} (${r.role}) sent. `), 'Its link went to that address by email; it works once, for 7 days.')
        : notice(
            'warn',
            h('strong', {}, `Invitation for ${r.email} (${r.role}) created. `),
            'Send this link yourself: this service sends no e-mail, and it is shown only this once. It works once, for 7 days; whoever joins through it verifies their address by email before signing in.',
            copyable(r.invitationUrl, { testId: 'invitation-url' }),
          ),
    );
    form.reset();
    await showInvitations();
  });
  inviteCard.append(
    h('div', { class: 'card-head' }, h('h2', {}, 'Invitations')),
    h('div', { class: 'card-body' }, form, invitationsList),
  );

  const showUsage = async () => {
    let usage;
    try {
      usage = await optional('/api/usage');
    } catch (err) {
      return fill(usageBody, errorNotice(err));
    }
    if (!usage || !Array.isArray(usage.days)) return fill(usageBody, h('p', { class: 'muted', dataset: { testid: 'usage-placeholder' } }, 'Usage is not available on this service yet.'));
    fill(
      usageBody,
      h('p', { class: 'muted' }, `Node hours per day in ${usage.month}: `, h('span', { class: 'legend legend-running' }, 'running'), ' and ', h('span', { class: 'legend legend-paused' }, 'paused'), '.'),
      usageChart(usage.days),
    );
  };

  fill(
    main,
    h('div', { class: 'page-head' }, h('h1', {}, 'Account'), h('p', { class: 'muted' }, 'Your plan, the people who work on this account’s nodes, and this month’s use.')),
    h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', {}, 'Plan')), planBody),
    h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', {}, 'Members')), h('div', { class: 'card-body' }, membersOut, membersList)),
    inviteCard,
    h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', {}, 'Node time this month')), usageBody),
    security.card,
    ownership.card,
  );
  await Promise.all([showPlan(), showMembers().then(showInvitations), showUsage(), security.load()]);
}
