// @ts-check
/** The run view's cancel (a reason, whether to undo the completed calls) and pause, sent to the API. */
import { post } from './api.js';
import { showError } from './notices.js';

/**
 * Wires the cancel button: while the request runs the button is disabled; the run as the API
 * answers goes to `cancelled`, a refusal is shown and the button enabled again.
 * @param {{ button: HTMLButtonElement, reason: HTMLInputElement, compensate: HTMLInputElement }} form
 * @param {HTMLElement} errors
 * @param {string} runId
 * @param {(run: import('./types.js').RunJson) => void} cancelled
 */
export function wireCancel(form, errors, runId, cancelled) {
  const cancel = async () => {
    form.button.disabled = true;
    try {
      const reason = form.reason.value.trim();
      cancelled(
        await post(`/v1/runs/${encodeURIComponent(runId)}/cancel`, {
          ...(reason ? { reason } : {}),
          ...(form.compensate.checked ? { compensate: true } : {}),
        }),
      );
    } catch (error) {
      showError(error, errors);
      form.button.disabled = false;
    }
  };
  form.button.addEventListener('click', () => void cancel());
}

/**
 * Wires the pause button: the run as the API answers it (with `pause_requested` until it is
 * reached) goes to `asked`; a refusal is shown and the button enabled again.
 * @param {HTMLButtonElement} button
 * @param {HTMLElement} errors
 * @param {string} runId
 * @param {(run: import('./types.js').RunJson) => void} asked
 */
export function wirePause(button, errors, runId, asked) {
  const pause = async () => {
    button.disabled = true;
    try {
      asked(await post(`/v1/runs/${encodeURIComponent(runId)}/pause`, {}));
    } catch (error) {
      showError(error, errors);
      button.disabled = false;
    }
  };
  button.addEventListener('click', () => void pause());
}
