// Small DOM helpers shared by the pages. Text always goes in as text nodes, never as HTML, so
// nothing a user or the API sends can inject markup.

/** h('a', {href: '/x', class: 'btn'}, 'text', child) builds an element. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces the children of `el`. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export function time(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return h('time', { datetime: iso, title: d.toLocaleString() }, relative(d));
}

function relative(date) {
  const s = Math.round((Date.now() - date.getTime()) / 1000);
  const future = s < 0;
  const a = Math.abs(s);
  const [n, unit] = a < 45 ? [0, ''] : a < 3600 ? [Math.round(a / 60), 'min'] : a < 86400 ? [Math.round(a / 3600), 'h'] : [Math.round(a / 86400), 'd'];
  if (!unit) return future ? 'in a few seconds' : 'just now';
  return future ? `in ${n} ${unit}` : `${n} ${unit} ago`;
}

const STATUS_TONES = {
  RUNNING: 'ok', SUCCESS: 'ok',
  STARTING: 'busy', IN_PROGRESS: 'busy', DESTROYING: 'busy',
  PAUSED: 'idle', DESTROYED: 'idle', EXPORTED: 'idle',
  FAILED: 'bad', FAILURE: 'bad', STORAGE_LOST: 'bad',
};

export function statusBadge(status) {
  const tone = STATUS_TONES[status] ?? 'idle';
  return h('span', { class: `badge badge-${tone}`, dataset: { status } }, tone === 'busy' ? h('span', { class: 'spinner', 'aria-hidden': 'true' }) : null, status);
}

export function lockBadge(locked) {
  return h('span', { class: `badge ${locked ? 'badge-warn' : 'badge-ok'}` }, locked ? 'Locked' : 'Unlocked');
}

/** A notice box: tone is info, warn, error or ok. */
export function notice(tone, ...children) {
  return h('div', { class: `notice notice-${tone}`, role: tone === 'error' ? 'alert' : 'status' }, ...children);
}

export function copyButton(getText, label = 'Copy') {
  const button = h('button', { type: 'button', class: 'btn btn-small btn-secondary' }, label);
  button.addEventListener('click', async () => {
    const text = typeof getText === 'function' ? getText() : getText;
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Clipboard access needs a secure context; fall back to a hidden textarea.
      const area = h('textarea', { class: 'sr-only' });
      area.value = text;
      document.body.append(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    }
    button.textContent = 'Copied';
    setTimeout(() => (button.textContent = label), 1500);
  });
  return button;
}

/** A value shown in monospace with a copy button next to it. */
export function copyable(text, { label = 'Copy', testId } = {}) {
  return h('div', { class: 'copyable' }, h('code', { dataset: testId ? { testid: testId } : undefined }, text), copyButton(text, label));
}

/** Saves text as a file through the browser's download. */
export function download(filename, text, type = 'application/x-pem-file') {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h('a', { href: url, download: filename, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * A modal dialog; resolves with the submitted form's values, or null when cancelled. The dialog
 * element gives focus trapping and Escape for free.
 */
export function dialog({ title, body, confirmLabel = 'Confirm', danger = false, fields = [], onConfirm }) {
  return new Promise((resolve) => {
    const error = h('div', { class: 'dialog-error', role: 'alert' });
    const form = h(
      'form',
      { method: 'dialog', class: 'dialog-form' },
      h('h2', {}, title),
      body ? h('p', {}, body) : null,
      fields.map((f) =>
        h(
          'label',
          { class: 'field' },
          h('span', {}, f.label),
          f.type === 'textarea'
            ? // Words a browser must neither check nor remember (a recovery phrase).
              h('textarea', { name: f.name, rows: 3, required: f.required ?? true, autocomplete: 'off', spellcheck: 'false', autocapitalize: 'off' })
            : h('input', { name: f.name, type: f.type ?? 'text', required: f.required ?? true, autocomplete: f.autocomplete ?? 'off' }),
        ),
      ),
      error,
      h(
        'div',
        { class: 'dialog-actions' },
        h('button', { type: 'button', class: 'btn btn-secondary', value: 'cancel', onclick: () => close(null) }, 'Cancel'),
        h('button', { type: 'submit', class: `btn ${danger ? 'btn-danger' : 'btn-primary'}` }, confirmLabel),
      ),
    );
    const dlg = h('dialog', { class: 'dialog', 'aria-label': title }, form);
    const close = (value) => {
      dlg.close();
      dlg.remove();
      resolve(value);
    };
    dlg.addEventListener('cancel', (e) => {
      e.preventDefault();
      close(null);
    });
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const values = Object.fromEntries(new FormData(form).entries());
      if (!onConfirm) return close(values);
      const submit = form.querySelector('button[type=submit]');
      submit.disabled = true;
      fill(error);
      try {
        await onConfirm(values);
        close(values);
      } catch (err) {
        fill(error, err.message ?? String(err));
        submit.disabled = false;
      }
    });
    document.body.append(dlg);
    dlg.showModal();
    (form.querySelector('input, textarea') ?? form.querySelector('button[type=submit]')).focus();
  });
}

/** Runs an action from a button: disables it meanwhile and shows the API's refusal in `out`. */
export async function runAction(button, out, action) {
  button.disabled = true;
  delete out.dataset.transient;
  fill(out);
  try {
    const result = await action();
    if (result?.message) fill(out, notice('ok', result.message));
    return result;
  } catch (err) {
    fill(out, errorNotice(err));
    return undefined;
  } finally {
    button.disabled = false;
  }
}

export function errorNotice(err) {
  return notice('error', h('strong', {}, err.title ?? 'The request was refused'), ' ', err.message ?? String(err), err.code ? h('span', { class: 'muted' }, ` (${err.code})`) : null);
}

/**
 * A table that turns into labelled cards on a phone. rows: [{attrs, cells: [content per column]}];
 * each cell is labelled with its column's name for the phone layout.
 */
export function table(testId, columns, rows) {
  return h(
    'table',
    { class: 'table responsive', dataset: { testid: testId } },
    h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows.map(({ attrs, cells }) => h('tr', attrs ?? {}, cells.map((cell, i) => h('td', { 'data-label': columns[i] }, cell))))),
  );
}

/** Submits a form through `action`, with the button disabled meanwhile and a refusal shown in `out`. */
export function onSubmit(form, submit, out, action) {
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    submit.disabled = true;
    fill(out);
    try {
      await action();
    } catch (err) {
      fill(out, errorNotice(err));
    } finally {
      submit.disabled = false;
    }
  });
}
