// @ts-check
/**
 * The inspector's entry: asks for a token when the server has tokens (kept in this tab's
 * sessionStorage only), loads the machine's description, and routes `#/` (the runs list),
 * `#/runs/<id>` (one run) and `#/schedules` without reloading the page.
 */
import { ApiError, get, getToken, setToken } from './api.js';
import { h, fill } from './dom.js';
import { showConnection, showError } from './notices.js';
import { mountRunView } from './run-view.js';
import { mountRunsView } from './runs-view.js';
import { mountSchedulesView } from './schedules-view.js';

const app = /** @type {HTMLElement} */ (document.getElementById('app'));
const signOut = /** @type {HTMLButtonElement} */ (document.getElementById('sign-out'));

/** @type {(() => void) | undefined} */
let unmount;

/**
 * Asks for a token; resolves once one is stored.
 * @param {string} why
 * @returns {Promise<void>}
 */
function askForToken(why) {
  return new Promise((resolve) => {
    const input = h('input', {
      type: 'password',
      'data-testid': 'token-input',
      'aria-label': 'Token',
      autocomplete: 'off',
      required: true,
    });
    const form = h(
      'form',
      { class: 'token-form card', 'data-testid': 'token-form' },
      h('h2', {}, 'This server needs a token'),
      h('p', { class: 'muted' }, why),
      h('label', {}, 'Token ', input),
      h('button', { type: 'submit', class: 'primary' }, 'Open the inspector'),
      h(
        'p',
        { class: 'muted' },
        'The token stays in this browser tab (sessionStorage) and is sent only to this server.',
      ),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      setToken(input.value.trim());
      resolve();
    });
    fill(app, form);
    input.focus();
  });
}

/** The machine's description, once the server accepts this tab (asking for a token until it does). */
async function connect() {
  for (;;) {
    try {
      const machine = await get('/v1/machine');
      signOut.hidden = !getToken();
      return machine;
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 401) throw error;
      const had = getToken();
      setToken(null);
      await askForToken(had ? 'The token was refused; give another one.' : 'Give a token to see and act on runs.');
    }
  }
}

/** @param {import('./types.js').MachineDescription} machine */
function route(machine) {
  unmount?.();
  unmount = undefined;
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path = '/', search = ''] = hash.split('?');
  const runMatch = /^\/runs\/([^/]+)$/.exec(path);
  if (runMatch?.[1]) {
    unmount = mountRunView(app, decodeURIComponent(runMatch[1]), machine, showConnection);
    return;
  }
  if (path === '/schedules') {
    unmount = mountSchedulesView(app);
    return;
  }
  const params = new URLSearchParams(search);
  unmount = mountRunsView(
    app,
    {
      status: params.get('status') ?? '',
      session: params.get('session') ?? '',
      tag: params.get('tag') ?? '',
      metadata: params.get('metadata') ?? '',
    },
    ({ status, session, tag, metadata }) => {
      const next = new URLSearchParams();
      if (status) next.set('status', status);
      if (session) next.set('session', session);
      if (tag) next.set('tag', tag);
      if (metadata) next.set('metadata', metadata);
      location.hash = `#/${next.size ? `?${next}` : ''}`;
    },
  );
}

signOut.addEventListener('click', () => {
  setToken(null);
  location.reload();
});

try {
  const machine = await connect();
  window.addEventListener('hashchange', () => route(machine));
  route(machine);
} catch (error) {
  fill(app);
  showError(error);
}
