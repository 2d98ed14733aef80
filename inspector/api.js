// @ts-check
/**
 * The page's only way to the server: the public HTTP API of its own origin, with the token (when
 * the server has tokens) from this tab's sessionStorage. Every failure becomes an `ApiError`
 * carrying the API's `{ error: failure }`, so the page can show it instead of swallowing it.
 */

const TOKEN_KEY = 'baton.inspector.token';

/** An API answer that was not 2xx, or a request that did not reach the server. */
export class ApiError extends Error {
  /**
   * @param {number} status 0 when the server could not be reached
   * @param {{ code: string, kind?: string, message: string, details?: Record<string, unknown> }} failure
   */
  constructor(status, failure) {
    super(`${status ? `${status} ` : ''}${failure.code}: ${failure.message}`);
    this.status = status;
    this.failure = failure;
  }
}

/** The token of this tab, if one was given. */
export function getToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** @param {string | null} token */
export function setToken(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

const MAX_RATE_WAIT_MS = 5000;
/** How long a read keeps waiting out 429s before the limit is shown as an error. */
const RATE_PATIENCE_MS = 60_000;

/**
 * One request to the API. A `429` on a read is waited out (its `Retry-After`, at most 5 s a time,
 * for up to a minute in all): a page that reloads in bursts must not show a transient limit as an
 * error. A count of tries would not do: one reload sends several reads at once, and under a limit of
 * one a second some of them lose the race again and again.
 * @param {string} method
 * @param {string} path starting with `/v1/`
 * @param {unknown} [body]
 * @returns {Promise<any>}
 */
export async function request(method, path, body) {
  const giveUpAt = Date.now() + RATE_PATIENCE_MS;
  for (;;) {
    try {
      return await send(method, path, body);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 429 || method !== 'GET' || Date.now() > giveUpAt)
        throw error;
      const wait = Number(error.failure.details?.retry_after_ms ?? 1000);
      // Jitter, so the requests of one burst do not all come back at the same instant.
      await new Promise((resolve) => setTimeout(resolve, Math.min(MAX_RATE_WAIT_MS, wait * (1 + Math.random()))));
    }
  }
}

/**
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<any>}
 */
async function send(method, path, body) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  const token = getToken();
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new ApiError(0, { code: 'server.unreachable', message: 'The server cannot be reached' });
  }
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!response.ok) {
    const failure = json?.error ?? { code: 'http.error', message: `${response.status} ${response.statusText}` };
    throw new ApiError(response.status, failure);
  }
  return json;
}

/** @param {string} path */
export const get = (path) => request('GET', path);

/** @param {string} path @param {unknown} [body] */
export const post = (path, body = {}) => request('POST', path, body);
