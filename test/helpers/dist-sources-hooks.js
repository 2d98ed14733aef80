/** The module hooks of `dist-sources.js`: a file under src/ or machines/ resolves to its build in dist/. */
import { URL } from 'node:url';

const ROOT = new URL('../../', import.meta.url).href;
const SOURCES = ['src/', 'machines/'].map((dir) => ROOT + dir);

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  if (!resolved.url.endsWith('.ts') || !SOURCES.some((dir) => resolved.url.startsWith(dir))) return resolved;
  return { ...resolved, url: `${ROOT}dist/${resolved.url.slice(ROOT.length, -'.ts'.length)}.js`, format: 'module' };
}
