/**
 * A fresh application that depends on Baton's packed tarball, for test/package: `npm pack` of
 * this checkout (its dist/, built by the suite's set-up), a strict TypeScript app outside the
 * repository, and npm installs into it from the registry (the npm cache first).
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { scaled } from './limits.js';
import { REPO_ROOT } from './run-node.js';

/** The parts of package.json these tests read. */
export interface RepoPackage {
  name: string;
  license: string;
  bin: Record<string, string>;
  exports: Record<string, { types: string; default: string }>;
  dependencies: Record<string, string>;
  peerDependencies: { zod: string; xstate: string };
  devDependencies: Record<string, string>;
}

/** A packed tarball and the paths it holds. */
export interface Packed {
  tarball: string;
  files: string[];
}

/** What a command did. */
export interface CommandOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command in `cwd` until it exits, with npm's own `npm_*` variables (set by `npm test`) left out. */
export function runIn(cwd: string, command: string, args: string[]): Promise<CommandOutcome> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
  for (const key of ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_MODEL']) delete env[key];
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd, env, encoding: 'utf8', timeout: scaled(240_000), maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/**
 * Packs this checkout into `dir`. `--ignore-scripts`: `prepare` would rebuild dist/ (removing it
 * first) under the other test files that run the CLI from it; the suite's set-up built it.
 */
export async function packRepository(dir: string): Promise<Packed> {
  const pack = await runIn(REPO_ROOT, 'npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir]);
  expect(pack.code, pack.stderr).toBe(0);
  const [result] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
  return { tarball: join(dir, result!.filename), files: result!.files.map((file) => file.path) };
}

/** The lowest version of a caret range (`^4.2.0` → `4.2.0`), the range's low end. */
export function lowestOf(range: string): string {
  const low = /^\^(\d+\.\d+\.\d+)$/.exec(range)?.[1];
  expect(low, `peer range '${range}' is a caret range`).toBeDefined();
  return low!;
}

/** The newest version of `name` in `range`, as the registry (or npm's cache of it) lists them. */
export async function newestOf(name: string, range: string): Promise<string> {
  const view = await runIn(REPO_ROOT, 'npm', ['view', `${name}@${range}`, 'version', '--json', '--prefer-offline']);
  expect(view.code, view.stderr).toBe(0);
  const listed = JSON.parse(view.stdout) as string | string[];
  const parts = (version: string) => version.split('.').map(Number);
  const newer = (a: string, b: string) => {
    const [x, y] = [parts(a), parts(b)];
    const i = x.findIndex((part, at) => part !== y[at]);
    return i >= 0 && x[i]! > y[i]!;
  };
  return (Array.isArray(listed) ? listed : [listed]).reduce((best, version) => (newer(version, best) ? version : best));
}

/** The first ```ts block after `heading` in the README. */
export function readmeBlock(readme: string, heading: string): string {
  const from = readme.indexOf(`\n${heading}\n`);
  expect(from, `README.md has a section '${heading}'`).toBeGreaterThanOrEqual(0);
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(from))?.[1] ?? '';
  expect(block, `README.md has a \`\`\`ts block under '${heading}'`).not.toBe('');
  return block;
}

/** An application folder with its files, and what is installed in it. */
export interface App {
  dir: string;
  /** The version of a package installed in the app (undefined when it is not). */
  version(name: string): string | undefined;
}

/**
 * Writes a fresh ESM application: `files` (TypeScript), one more that imports every entry point
 * of the package (so tsc checks all the public declarations), and the tsconfig a strict Node 20
 * app has (@tsconfig/node20's target and lib, strict, noUncheckedIndexedAccess,
 * verbatimModuleSyntax), without `skipLibCheck`, so the declarations it loads are checked too.
 * Not exactOptionalPropertyTypes: xstate's own declarations fail it.
 */
export function newApp(dir: string, pkg: RepoPackage, files: Record<string, string>): App {
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  writeFileSync(join(dir, 'package.json'), json({ name: 'fresh-app', private: true, type: 'module' }));
  const compilerOptions = {
    target: 'ES2022',
    lib: ['ES2023'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    verbatimModuleSyntax: true,
    types: ['node'],
    rootDir: '.',
    outDir: 'build',
  };
  writeFileSync(join(dir, 'tsconfig.json'), json({ compilerOptions, include: ['*.ts'] }));
  const entries = Object.keys(pkg.exports).map(
    (key, i) => `export * as entry${i} from '${pkg.name}${key.slice(1)}';\n`,
  );
  for (const [name, text] of Object.entries({ ...files, 'entries.ts': entries.join('') })) {
    writeFileSync(join(dir, name), text);
  }
  return {
    dir,
    version(name) {
      const file = join(dir, 'node_modules', name, 'package.json');
      return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version : undefined;
    },
  };
}

/**
 * `npm install`s the tarball and `specs` into the app (with the repository's TypeScript and
 * @types/node). Install scripts are skipped, and better-sqlite3's native addon is copied from
 * this checkout's build of the same version: compiling it once more (a minute or two) tests
 * better-sqlite3, which `npm ci` in CI does anyway, not this package.
 */
export async function installInto(app: App, packed: Packed, specs: string[], flags: string[] = []): Promise<void> {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as RepoPackage;
  const tools = ['typescript', '@types/node'].map((name) => `${name}@${pkg.devDependencies[name]}`);
  const install = await runIn(app.dir, 'npm', [
    'install',
    '--no-audit',
    '--no-fund',
    '--prefer-offline',
    '--ignore-scripts',
    ...flags,
    packed.tarball,
    ...specs,
    ...tools,
  ]);
  expect(install.code, `npm install ${specs.join(' ')}:\n${install.stderr}`).toBe(0);
  const sqlite = pkg.dependencies['better-sqlite3']!;
  expect(app.version('better-sqlite3')).toBe(sqlite);
  expect(readJson(join(REPO_ROOT, 'node_modules/better-sqlite3/package.json')).version).toBe(sqlite);
  const addon = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node';
  if (!existsSync(join(app.dir, addon))) {
    mkdirSync(join(app.dir, 'node_modules/better-sqlite3/build/Release'), { recursive: true });
    copyFileSync(join(REPO_ROOT, addon), join(app.dir, addon));
  }
}

function readJson(file: string): { version: string } {
  return JSON.parse(readFileSync(file, 'utf8')) as { version: string };
}
