// The messages the service sends, each a plain-text and an HTML body from one small template, with
// the service's name and its public URL. Every value put into the HTML is escaped.
import type { NotificationKind } from '../domain/notifications.ts';

export type EmailKind = 'verify-email' | 'password-reset' | 'signup-attempt' | 'signup-approved' | 'invitation' | NotificationKind;

/** What a message says besides its link (a node's name, a month's limit), by name. */
export type EmailFacts = Record<string, string>;

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

export interface TemplateContext {
  serviceName: string;
  publicUrl: string;
}

const escapeHtml = (s: string) =>
  s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;');

interface Template {
  subject: (c: TemplateContext, f: EmailFacts) => string;
  /** Paragraphs before the link, the link's label, paragraphs after it. */
  before: (c: TemplateContext, f: EmailFacts) => string[];
  label: string;
  after: (c: TemplateContext, f: EmailFacts) => string[];
}

// Every notification says why the person gets it and where to stop it.
const WHY_NOTIFIED = 'You receive this as an owner or admin of the account. Turn these messages off, each kind on its own, in the Security section of your Account page.';


const TEMPLATES: Record<EmailKind, Template> = {
  'verify-email': {
    subject: (c) => `Verify your email address for ${c.serviceName}`,
    before: (c) => [`Welcome to ${c.serviceName}. Open this link within 24 hours to verify your email address:`],
    label: 'Verify my email address',
    after: () => ['If you did not sign up, ignore this message: nothing happens without the link.'],
  },
  'password-reset': {
    subject: (c) => `Reset your ${c.serviceName} password`,
    before: () => ['Someone asked to reset the password of the account with this email address. Open this link within an hour to choose a new one:'],
    label: 'Choose a new password',
    after: () => ['Setting a new password signs you out everywhere else. If you did not ask, ignore this message: your password stays as it is.'],
  },
  'signup-attempt': {
    subject: (c) => `Someone tried to sign up to ${c.serviceName} with your address`,
    before: (c) => [`Someone tried to sign up to ${c.serviceName} with this email address, which already has an account. If it was you, sign in instead, or reset your password:`],
    label: 'Reset my password',
    after: () => ['If it was not you, nothing changed and you need not do anything.'],
  },
  'signup-approved': {
    subject: (c) => `Your ${c.serviceName} account is ready`,
    before: (c) => [`Your ${c.serviceName} account was approved. Sign in to create tokens and nodes:`],
    label: 'Sign in',
    after: () => [],
  },
  invitation: {
    subject: (c, f) => `${f.inviter} invited you to ${c.serviceName}`,
    before: (c, f) => [`${f.inviter} invited you to join their account on ${c.serviceName} as ${f.role}. Open this link within 7 days to choose a password and join:`],
    label: 'Accept the invitation',
    after: () => ['If you did not expect this, ignore this message: nothing happens without the link.'],
  },
  'node-failed': {
    subject: (c, f) => `Node ${f.node} failed on ${c.serviceName}`,
    before: (_c, f) => [`Your node ${f.node} (${f.nodeId}) is FAILED: a build could not bring its daemon up. Its page shows its events and logs; start or upgrade it again from there:`],
    label: 'Open the node',
    after: () => [WHY_NOTIFIED],
  },
  'node-storage-lost': {
    subject: (c, f) => `Node ${f.node} lost its storage on ${c.serviceName}`,
    before: (_c, f) => [
      `Your node ${f.node} (${f.nodeId}) lost its storage: ${f.reason}. Its daemon is stopped until you recover it.`,
      "Recover it from its page (it starts on a fresh volume), then give it the wallet's mnemonic and unlock it: with continuous state its channel state comes back from the service's VSS; without, restore your latest backup into a new node instead.",
    ],
    label: 'Open the node',
    after: () => [WHY_NOTIFIED],
  },
  'backup-failed': {
    subject: (c, f) => `A backup of node ${f.node} failed on ${c.serviceName}`,
    before: (_c, f) => [`The backup ${f.backupId} of your node ${f.node} (${f.nodeId}) failed: ${f.reason}`, 'Its page shows the node\'s backups; take another from there:'],
    label: 'Open the node',
    after: () => [WHY_NOTIFIED],
  },
  'api-calls-80': {
    subject: (c) => `Your ${c.serviceName} account has used 80% of this month's API calls`,
    before: (_c, f) => [`Your account has made ${f.used} of the ${f.limit} API calls its plan allows in ${f.month} (UTC). Past ${f.limit}, calls are refused (429 quota_exceeded) until the month ends or the plan changes. Usage per member and token is on your Account page:`],
    label: 'See the usage',
    after: () => [WHY_NOTIFIED],
  },
  'api-calls-100': {
    subject: (c) => `Your ${c.serviceName} account has used all of this month's API calls`,
    before: (_c, f) => [`Your account has made all ${f.limit} API calls its plan allows in ${f.month} (UTC): further calls are refused (429 quota_exceeded) until the month ends or the plan changes. Usage per member and token is on your Account page:`],
    label: 'See the usage',
    after: () => [WHY_NOTIFIED],
  },
};

/** The message of `kind`, its link being `link` (a URL under PUBLIC_URL). */
export function renderEmail(kind: EmailKind, link: string, context: TemplateContext, facts: EmailFacts = {}): RenderedEmail {
  const t = TEMPLATES[kind];
  const before = t.before(context, facts);
  const after = t.after(context, facts);
  const text = [...before, '', link, '', ...after, '', `-- ${context.serviceName}, ${context.publicUrl}`, ''].join('\n');
  const p = (s: string) => `<p>${escapeHtml(s)}</p>`;
  const html = [
    '<!doctype html><html><body style="font-family: sans-serif; line-height: 1.5">',
    ...before.map(p),
    `<p><a href="${escapeHtml(link)}">${escapeHtml(t.label)}</a></p>`,
    `<p style="color: #666; font-size: 90%">${escapeHtml(link)}</p>`,
    ...after.map(p),
    `<p style="color: #666">${escapeHtml(context.serviceName)}, <a href="${escapeHtml(context.publicUrl)}">${escapeHtml(context.publicUrl)}</a></p>`,
    '</body></html>',
  ].join('\n');
  return { subject: t.subject(context, facts), text, html };
}
