// "Export as test": the selected conversation as a scenario file (`*.scenario.yaml`, README "Testing your
// conversations"), downloaded from GET /api/v1/conversations/{id}/scenario with the dashboard's own credentials.
import { download } from './api.ts';
import { h } from './dom.ts';

/** Saves the file through a temporary link (the browser's own download). */
function save(blob: Blob, name: string) {
  const url = URL.createObjectURL(blob);
  const link = h('a', { href: url, download: name, hidden: '' });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** The button and the line that says what it did (a polite live region). */
export function exportButton(conversationId: string): HTMLElement {
  const status = h('span', { role: 'status', class: 'export-status', 'data-testid': 'export-status' });
  const button = h('button', { type: 'button', class: 'export', 'data-testid': 'export-scenario' }, 'Export as test');
  button.addEventListener('click', () => {
    button.disabled = true;
    status.textContent = 'Exporting…';
    download(`/api/v1/conversations/${encodeURIComponent(conversationId)}/scenario`, `${conversationId}.scenario.yaml`)
      .then(({ blob, name }) => {
        save(blob, name);
        status.textContent = `Saved ${name}`;
      })
      .catch((err: Error) => {
        status.textContent = `Could not export: ${err.message}`;
      })
      .finally(() => (button.disabled = false));
  });
  return h('div', { class: 'timeline-actions' }, button, status);
}
