/** A small client of the Baton HTTP API: JSON requests with a bearer token, errors as `CliError`s. */
import { CliError } from './cli-error.js';

/** Where the server is and how to authenticate. */
export interface HttpTarget {
  url: string;
  token?: string | undefined;
}

/** What `fetch` failing to connect looks like, as a failure. */
export function unreachable(url: string, error: unknown): CliError {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
  return new CliError({ code: 'server.unreachable', message: `Cannot reach the Baton server at ${url} (${why})` });
}

/** The failure an error response carries (`{ error: { code, message } }`), or one made from its status. */
export async function toResponseError(response: Response): Promise<CliError> {
  const text = await response.text().catch(() => '');
  let error: { code?: unknown; kind?: unknown; message?: unknown; details?: unknown } | undefined;
  try {
    error = (JSON.parse(text) as { error?: typeof error }).error;
  } catch {
    error = undefined;
  }
  return new CliError({
    code: typeof error?.code === 'string' ? error.code : `http.${response.status}`,
    message:
      typeof error?.message === 'string' ? error.message : `HTTP ${response.status} ${response.statusText}`.trim(),
    status: response.status,
    // A body without a kind (not Baton's, or a proxy's page): the status says whose the fault is.
    kind: typeof error?.kind === 'string' ? error.kind : response.status < 500 ? 'user' : 'system',
    ...(typeof error?.details === 'object' && error.details !== null
      ? { details: error.details as Record<string, unknown> }
      : {}),
  });
}

/** Creates the client; every request carries the token, if any. */
export function createHttpClient(target: HttpTarget) {
  const base = target.url.replace(/\/+$/, '');
  const auth: Record<string, string> = target.token ? { authorization: `Bearer ${target.token}` } : {};

  async function send(path: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(`${base}${path}`, init);
    } catch (error) {
      if ((error as { name?: string }).name === 'AbortError') throw error;
      throw unreachable(base, error);
    }
  }

  return {
    url: base,
    /** A JSON request; resolves with the parsed body of a 2xx answer, throws the error of any other. */
    async request<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
      const response = await send(path, {
        method,
        headers: {
          ...auth,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (!response.ok) throw await toResponseError(response);
      // 204: no body (a DELETE).
      return (response.status === 204 ? null : await response.json()) as T;
    },
    /** A binary GET; resolves with the bytes and their media type, throws the error of a non-2xx answer. */
    async bytes(path: string): Promise<{ mediaType: string; content: Buffer }> {
      const response = await send(path, { headers: { ...auth, accept: '*/*' } });
      if (!response.ok) throw await toResponseError(response);
      return {
        mediaType: response.headers.get('content-type') ?? 'application/octet-stream',
        content: Buffer.from(await response.arrayBuffer()),
      };
    },
    /** Opens an event stream; a 2xx answer is returned as is (204: nothing left), any other throws. */
    async stream(path: string, options: { lastEventId?: number | undefined; signal?: AbortSignal | undefined }) {
      const response = await send(path, {
        headers: {
          ...auth,
          accept: 'text/event-stream',
          ...(options.lastEventId ? { 'last-event-id': String(options.lastEventId) } : {}),
        },
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (!response.ok) throw await toResponseError(response);
      return response;
    },
  };
}

/** A client made by `createHttpClient`. */
export type HttpClient = ReturnType<typeof createHttpClient>;
