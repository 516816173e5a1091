// The messages the service sends, each a plain-text and an HTML body from one small template, with
// the service's name and its public URL. Every value put into the HTML is escaped.
export type EmailKind = 'verify-email' | 'password-reset' | 'signup-attempt' | 'signup-approved';

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
  subject: (c: TemplateContext) => string;
  /** Paragraphs before the link, the link's label, paragraphs after it. */
  before: (c: TemplateContext) => string[];
  label: string;
  after: (c: TemplateContext) => string[];
}

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
};

/** The message of `kind`, its link being `link` (a URL under PUBLIC_URL). */
export function renderEmail(kind: EmailKind, link: string, context: TemplateContext): RenderedEmail {
  const t = TEMPLATES[kind];
  const before = t.before(context);
  const after = t.after(context);
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
  return { subject: t.subject(context), text, html };
}
