/**
 * Baton as a dependency (issue 22, items 8–11), as an application gets it: the tarball `npm pack`
 * makes, installed from the npm registry's packages into a fresh application outside the
 * repository, under strict TypeScript without `skipLibCheck`. It is slow (npm installs and two
 * tsc runs) and here on purpose: an exact-pinned zod or xstate (a second copy the application's
 * types do not match), a declaration that names a devDependency's types, a source map into an
 * unshipped src/, or an import path the README gets wrong all pass every in-repository test.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scaled } from '../helpers/limits.js';
import {
  installInto,
  lowestOf,
  newApp,
  newestOf,
  packRepository,
  readmeBlock,
  runIn,
  type Packed,
  type RepoPackage,
} from '../helpers/packed-app.js';
import { REPO_ROOT } from '../helpers/run-node.js';
import { tempDir } from '../helpers/temp.js';

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as RepoPackage;
const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
// The tarball outlives each test's temp dirs: all of them install it.
const packDir = mkdtempSync(join(tmpdir(), 'baton-pack-'));
let packed: Packed;

beforeAll(async () => {
  packed = await packRepository(packDir);
}, scaled(120_000));

afterAll(() => rmSync(packDir, { recursive: true, force: true }));

describe('the packed package', () => {
  it('ships the build with its declarations, a LICENSE and the README images, and no source maps', () => {
    const files = packed.files;
    expect(files).toContain('LICENSE');
    expect(readFileSync(join(REPO_ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} /);
    expect(pkg.license).toBe('MIT');
    expect(files.filter((file) => file.endsWith('.map'))).toEqual([]);
    expect(files.filter((file) => /^(src|test|machines)\//.test(file))).toEqual([]);
    const mapped = files.filter(
      (file) => file.endsWith('.js') && readFileSync(join(REPO_ROOT, file), 'utf8').includes('sourceMappingURL'),
    );
    expect(mapped).toEqual([]);
    const images = [...readme.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
    expect(images.length).toBeGreaterThan(0);
    for (const image of images) expect(files, `README image ${image}`).toContain(image);
    for (const entry of Object.values(pkg.exports)) {
      expect(files).toContain(entry.types.replace(/^\.\//, ''));
      expect(files).toContain(entry.default.replace(/^\.\//, ''));
    }
    expect(files).toContain(pkg.bin.baton);
  });

  it('is imported in the README by its own name and entry points', () => {
    const entries = Object.keys(pkg.exports).map((key) => pkg.name + key.slice(1));
    const blocks = [...readme.matchAll(/```(?:ts|js)\n([\s\S]*?)```/g)].map((m) => m[1]!);
    const imported = blocks.flatMap((block) => [...block.matchAll(/from '(baton[^']*)'/g)].map((m) => m[1]!));
    expect(imported.length).toBeGreaterThan(5);
    expect(imported.filter((name) => !entries.includes(name))).toEqual([]);
    expect(readme).toContain(`npm install ${pkg.name} zod xstate`);
  });

  it(
    'type-checks and runs the README embedding example in a strict app, with zod and xstate at both ends of their peer ranges',
    async () => {
      const example = readmeBlock(readme, '## Embedding');
      const expected = [...example.matchAll(/console\.log\(.*\); \/\/ (.+)$/gm)].map((m) => m[1]!);
      expect(expected.length, 'the example says what it prints').toBeGreaterThan(0);
      const app = newApp(tempDir(), pkg, { 'example.ts': example });
      const ends = [
        { end: 'lowest', zod: lowestOf(pkg.peerDependencies.zod), xstate: lowestOf(pkg.peerDependencies.xstate) },
        { end: 'newest', zod: pkg.peerDependencies.zod, xstate: pkg.peerDependencies.xstate },
      ];
      for (const { end, zod, xstate } of ends) {
        await installInto(app, packed, [`zod@${zod}`, `xstate@${xstate}`]);
        const versions = { zod: app.version('zod'), xstate: app.version('xstate') };
        expect(versions, `${end} zod and xstate`).toEqual(
          end === 'lowest'
            ? { zod, xstate }
            : { zod: await newestOf('zod', zod), xstate: await newestOf('xstate', xstate) },
        );
        // One copy of each: Baton's is the application's (two copies are what failed tsc).
        expect(existsSync(join(app.dir, 'node_modules', pkg.name, 'node_modules', 'zod')), end).toBe(false);
        expect(existsSync(join(app.dir, 'node_modules', pkg.name, 'node_modules', 'xstate')), end).toBe(false);

        const tsc = await runIn(app.dir, process.execPath, ['node_modules/typescript/bin/tsc', '-p', '.']);
        expect(tsc.stdout + tsc.stderr, `tsc with zod ${versions.zod}, xstate ${versions.xstate}`).toBe('');
        expect(tsc.code).toBe(0);
        const run = await runIn(app.dir, process.execPath, ['build/example.js']);
        expect(run.code, run.stderr).toBe(0);
        expect(run.stdout.trim().split('\n'), `run with zod ${versions.zod}`).toEqual(expected);
      }
    },
    scaled(400_000),
  );

  it('is refused beside zod 3 by npm, and names the zod it needs when zod 3 is forced past npm', async () => {
    const range = pkg.peerDependencies.zod;
    const refused = newApp(tempDir(), pkg, {});
    const install = await runIn(refused.dir, 'npm', [
      'install',
      '--dry-run',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--ignore-scripts',
      packed.tarball,
      'zod@3',
    ]);
    expect(install.code).not.toBe(0);
    expect(install.stderr).toContain('ERESOLVE');
    expect(install.stderr).toContain(`peer zod@"${range}" from ${pkg.name}`);

    const forced = newApp(tempDir(), pkg, {});
    await installInto(forced, packed, ['zod@3', `xstate@${pkg.peerDependencies.xstate}`], ['--legacy-peer-deps']);
    expect(forced.version('zod')).toMatch(/^3\./);
    writeFileSync(
      join(forced.dir, 'forced.mjs'),
      `import { z } from 'zod';
import { createRuntime, createScriptedPlanner, defineTool } from '${pkg.name}';
const weather = defineTool({
  name: 'weather.get',
  description: 'The current temperature of a city',
  input: z.object({ city: z.string() }),
  effect: 'read',
  risk: 'low',
  execute: ({ city }) => ({ city, celsius: 21 }),
});
try {
  createRuntime({ database: './forced.db', planner: createScriptedPlanner([]), tools: [weather] });
  console.log('created');
} catch (error) {
  console.log(JSON.stringify({ name: error.name, message: error.message, failure: error.failure }));
}
`,
    );
    const run = await runIn(forced.dir, process.execPath, ['forced.mjs']);
    expect(run.code, run.stderr).toBe(0);
    const { name, message, failure } = JSON.parse(run.stdout) as {
      name: string;
      message: string;
      failure: { code: string; kind: string; message: string; details: unknown };
    };
    // Not zod's own TypeError ('z.toJSONSchema is not a function') from inside the first tool.
    expect(name, message).toBe('BatonError');
    expect(failure).toMatchObject({
      code: 'dependency.unsupported',
      kind: 'user',
      details: { dependency: 'zod', found: '3 or older', range },
    });
    expect(failure.message).toBe(
      `Baton needs zod ${range} (a peer dependency: it uses the application's zod), but the zod installed is 3 or older`,
    );
  });
});
