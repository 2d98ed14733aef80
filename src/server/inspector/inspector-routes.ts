/**
 * `GET /inspector/…`: the self-hosted inspector page. It uses only the public API of the same
 * origin; its Content-Security-Policy forbids any request elsewhere, inline scripts and styles,
 * and framing.
 */
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { httpError } from '../http-error.js';
import { loadInspectorFiles, type InspectorFile } from './inspector-files.js';

/** The page's security headers: nothing but its own origin, never inside another page. */
export const INSPECTOR_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
};

/** The inspector's routes (and `/` → the page); `files` defaults to the package's `inspector/`. */
export function inspectorRoutes(files: Map<string, InspectorFile> = loadInspectorFiles()): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get('/', (c) => c.redirect('/inspector/', 302));
  app.get('/inspector', (c) => c.redirect('/inspector/', 301));
  app.get('/inspector/:name{[^/]*}', (c) => {
    const name = c.req.param('name') || 'index.html';
    const file = files.get(name);
    if (!file) throw httpError('route.not_found', `No inspector file '${name}'`);
    return c.body(file.body as Uint8Array<ArrayBuffer>, 200, {
      ...INSPECTOR_HEADERS,
      'Content-Type': file.contentType,
    });
  });
  return app;
}
