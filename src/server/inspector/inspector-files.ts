/**
 * The inspector's files, found next to the package (not the working directory) and read once:
 * the page is a few small static files, so it is served from memory.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One static file of the page. */
export interface InspectorFile {
  body: Uint8Array;
  contentType: string;
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * The `inspector/` folder of the package: searched upward from this module, which sits at
 * `src/server/inspector/` in the sources and at `dist/src/server/inspector/` once built.
 */
export function findInspectorDir(from = dirname(fileURLToPath(import.meta.url))): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'inspector', 'index.html'))) return join(dir, 'inspector');
    if (dirname(dir) === dir) return undefined;
  }
}

/** The page's files by name (`index.html`, `main.js`, …); only types a browser page needs, no folders. */
export function loadInspectorFiles(dir = findInspectorDir()): Map<string, InspectorFile> {
  const files = new Map<string, InspectorFile>();
  if (dir === undefined) return files;
  for (const name of readdirSync(dir)) {
    const contentType = TYPES[extname(name)];
    if (contentType === undefined) continue;
    files.set(name, { body: readFileSync(join(dir, name)), contentType });
  }
  return files;
}
