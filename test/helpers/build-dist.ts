/**
 * The suite's global set-up: the CLI's child processes run the build in dist/ (as users run
 * `baton`), so dist/ must be the build of these sources. It is rebuilt with `npm run build` when
 * it is missing or stale: a source under src/ or machines/ without its output, or newer than
 * it, or a tsconfig newer than the build. An up-to-date build is left alone (checking the
 * mtimes takes milliseconds; a build some 7–20 s). Vitest runs this once per run, before any
 * test file; in watch mode, after editing src/, restart it (or `npm run build`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO_ROOT } from './run-node.js';

const SOURCE_DIRS = ['src', 'machines'];
const CONFIGS = ['tsconfig.json', 'tsconfig.build.json'];
const MAIN = join(REPO_ROOT, 'dist/src/cli/main.js');

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (/\.[cm]?ts$/.test(entry.name) && !/\.d\.[cm]?ts$/.test(entry.name)) yield path;
  }
}

const mtime = (path: string) => statSync(path).mtimeMs;

/** Why dist/ must be rebuilt, or undefined when it is the build of the sources as they are. */
export function staleness(): string | undefined {
  if (!existsSync(MAIN)) return 'dist/ has not been built';
  const built = mtime(MAIN);
  const config = CONFIGS.find((name) => mtime(join(REPO_ROOT, name)) > built);
  if (config) return `${config} changed since the last build`;
  for (const dir of SOURCE_DIRS) {
    for (const source of sources(join(REPO_ROOT, dir))) {
      const output = join(REPO_ROOT, 'dist', relative(REPO_ROOT, source).replace(/\.([cm]?)ts$/, '.$1js'));
      if (!existsSync(output)) return `${relative(REPO_ROOT, source)} has no build`;
      if (mtime(source) > mtime(output)) return `${relative(REPO_ROOT, source)} changed since the last build`;
    }
  }
  return undefined;
}

export function setup(): void {
  const why = staleness();
  if (!why) return;
  const started = Date.now();
  console.log(`Building dist/ for the CLI tests (${why})…`);
  const build = spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (build.status !== 0) {
    throw new Error(
      `npm run build failed (${build.error?.message ?? `exit ${build.status}`}):\n${build.stdout}${build.stderr}`,
    );
  }
  console.log(`Built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
