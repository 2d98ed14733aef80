/**
 * Every code block of the README is held to the code: the TypeScript and JavaScript ones
 * type-check under strict TypeScript against the package's own declarations (imported by the
 * package's name, as an application does); each command line names only commands, flags and
 * npm scripts that exist; the output samples are what the demo prints and the lifecycle picture
 * names only the machine's states and events. Blocks that run are run elsewhere too (the
 * embedding, agent module, variant and curl examples); a block no check knows fails here.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeMachine, runMachine } from '../../machines/index.js';
import { baton, startServe } from '../cli/cli-child.js';
import { scaled } from '../helpers/limits.js';
import { readmeBlocks, readmeText, type ReadmeBlock } from '../helpers/readme-blocks.js';
import { REPO_ROOT } from '../helpers/run-node.js';
import { tempDir } from '../helpers/temp.js';

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  scripts: Record<string, string>;
};
const blocks = readmeBlocks();
const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * What a fragment leaves out, for the type checker: the names it uses from the text around it.
 * Keyed by a line of the block; a fragment with names nothing declares fails to type-check.
 */
interface BlockContext {
  has: string;
  before?: string;
  after?: string;
}

const CONTEXT: BlockContext[] = [
  {
    has: 'createRunModel(twoApprovers)',
    before: `declare const twoApprovers: import('${pkg.name}/machines').RunMachineDefinition;`,
  },
  { has: 'createMcpTools(', before: `declare const planner: import('${pkg.name}').Planner;` },
  {
    has: "name: 'payments.charge'",
    before: [
      `import { z } from 'zod';`,
      `import { defineTool } from '${pkg.name}';`,
      'declare const payments: {',
      '  charge(customer: string, cents: number, options: { idempotencyKey: string }): Promise<{ id: string }>;',
      '  refund(chargeId: string, options: { idempotencyKey: string }): Promise<unknown>;',
      '};',
    ].join('\n'),
  },
  {
    has: "runtime.get('run_missing')",
    before: `import { BatonError } from '${pkg.name}';\ndeclare const runtime: import('${pkg.name}').Runtime;`,
  },
  { has: "input: 'Tidy the configs'", before: `declare const runtime: import('${pkg.name}').Runtime;` },
  { has: 'await runtime.prune({', before: `declare const runtime: import('${pkg.name}').Runtime;` },
  { has: '...reportTools', before: `declare const reportTools: import('${pkg.name}').AnyTool[];` },
  {
    has: '...memoryTools(), lookup',
    before: `import { createRuntime, memoryTools } from '${pkg.name}';\ndeclare const planner: import('${pkg.name}').Planner;\ndeclare const lookup: import('${pkg.name}').AnyTool;`,
  },
  { has: "input: 'Summarize the tickets'", before: `declare const runtime: import('${pkg.name}').Runtime;` },
  {
    has: "name: 'billing.charge'",
    before: [
      `import { z } from 'zod';`,
      `import { createRuntime, defineTool, ToolRateLimitedError } from '${pkg.name}';`,
      `declare const planner: import('${pkg.name}').Planner;`,
    ].join('\n'),
  },
  { has: "input: 'Send the digest'", before: `declare const runtime: import('${pkg.name}').Runtime;` },
  { has: "id: 'morning-report'", before: `declare const runtime: import('${pkg.name}').Runtime;` },
  { has: "sessionId: 'chat-42'", before: `declare const runtime: import('${pkg.name}').Runtime;` },
  { has: "input: 'Refund order 1042'", before: `declare const runtime: import('${pkg.name}').Runtime;` },
  {
    has: "reason: 'the vendor is down'",
    before: `declare const runtime: import('${pkg.name}').Runtime;\ndeclare const runId: string;`,
  },
  { has: "input: 'Mail the team the report'", before: `declare const runtime: import('${pkg.name}').Runtime;` },
  {
    has: 'await runtime.fork(run.id',
    before: `declare const runtime: import('${pkg.name}').Runtime;\ndeclare const run: import('${pkg.name}').Run;`,
  },
  { has: 'batonIdGenerator', before: `declare const runtime: import('${pkg.name}').Runtime;` },
  { has: 'fromBatonRun(runtime)', before: `declare const runtime: import('${pkg.name}').Runtime;` },
  { has: 'createOpenAIPlanner({', before: `import { createOpenAIPlanner } from '${pkg.name}';` },
  {
    // A state of a variant: inside extendRunMachine's states.
    has: "...durableDelay('approval'",
    before: [
      `import { durableDelay, extendRunMachine } from '${pkg.name}/machines';`,
      "const failure = { code: 'run.timed_out', kind: 'system', message: 'No decision within a day' };",
      "export const expiring = extendRunMachine({ name: 'expiring', version: 1,",
      '  states: ({ waiting_human, ...rest }) => ({ ...rest,',
    ].join('\n'),
    after: '}) });',
  },
];

function contextOf(block: ReadmeBlock): Partial<BlockContext> {
  const found = CONTEXT.filter((c) => block.code.includes(c.has));
  expect(found.length, `one context at most for the block at README.md:${block.line}`).toBeLessThanOrEqual(1);
  return found[0] ?? {};
}

function tsc(project: string) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', project],
      { cwd: REPO_ROOT, encoding: 'utf8', timeout: scaled(180_000) },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, output: stdout + stderr }),
    );
  });
}

describe('README code blocks', () => {
  it('has no block that no check here knows', () => {
    const unknown = blocks.filter((b) => !['ts', 'js', 'sh', 'json', ''].includes(b.lang));
    expect(unknown.map((b) => `README.md:${b.line} \`\`\`${b.lang}`)).toEqual([]);
  });

  it(
    'type-checks every TypeScript and JavaScript block, strict, against the built declarations',
    { timeout: scaled(240_000) },
    async () => {
      // Inside the repository, so the blocks import the package by its name (its `exports`, the
      // built dist/ declarations) and their own imports (zod, xstate, OpenTelemetry) resolve.
      mkdirSync(join(REPO_ROOT, '.tmp'), { recursive: true });
      const dir = mkdtempSync(join(REPO_ROOT, '.tmp', 'readme-blocks-'));
      scratch.push(dir);
      const code = blocks.filter((b) => b.lang === 'ts' || b.lang === 'js');
      expect(code.length).toBeGreaterThan(10);
      for (const block of code) {
        const { before = '', after = '' } = contextOf(block);
        // The agent module is imported by the server example as './agent.js'.
        const name = block.code.startsWith('// agent.ts') ? 'agent' : `readme-${block.line}`;
        const text = `${before}\n${block.code}${after}\nexport {};\n`;
        writeFileSync(join(dir, `${name}.${block.lang}`), text);
      }
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            module: 'nodenext',
            moduleResolution: 'nodenext',
            target: 'es2022',
            lib: ['es2022'],
            types: ['node'],
            allowJs: true,
            checkJs: true,
            noEmit: true,
            skipLibCheck: true,
          },
          include: ['*.ts', '*.js'],
        }),
      );
      const checked = await tsc(join(dir, 'tsconfig.json'));
      // Name the README line of each error, not the scratch file.
      const report = checked.output.replace(/\S*readme-(\d+)\.(ts|js)\((\d+),\d+\)/g, 'README.md:$1 (block line $3)');
      expect(report).toBe('');
      expect(checked.code).toBe(0);
    },
  );

  it(
    'names only baton commands and flags that exist, and npm scripts the package has',
    { timeout: scaled(120_000) },
    async () => {
      // Command lines of the shell blocks and of the output samples (`$ npx baton …`), and the
      // README's inline `baton …` spans.
      const lines = blocks
        .filter((b) => b.lang === 'sh' || b.lang === '')
        .flatMap((b) => b.code.replace(/\\\n\s*/g, ' ').split('\n'))
        .map((l) =>
          l
            .replace(/^\$ /, '')
            .replace(/\s+#.*$/, '')
            .replace(/^#.*$/, ''),
        )
        .concat([...readmeText().matchAll(/`((?:npx |npm run )?baton [^`]+)`/g)].map((m) => m[1]!))
        // In the repository the command line is `npm run baton -- …`, the demo `npm run demo -- …`.
        .map((l) => l.replace(/\bnpm run baton -- /g, 'baton ').replace(/\bnpm run demo -- /g, 'baton demo '));
      const uses = new Map<string, Set<string>>();
      for (const line of lines) {
        for (const m of line.matchAll(/(?:^|[\s'(])(?:npx )?baton ([a-z]+)((?: [^|;&]*)?)/g)) {
          const [command, rest = ''] = [m[1]!, m[2]];
          const flags = uses.get(command) ?? new Set<string>();
          for (const flag of rest.matchAll(/(?:^|\s)(--[a-z][a-z-]*)/g)) flags.add(flag[1]!);
          uses.set(command, flags);
        }
        for (const m of line.matchAll(/\bnpm (?:run )?([a-z:-]+)/g)) {
          if (['ci', 'install', 'i', 'run'].includes(m[1]!)) continue;
          expect(Object.keys(pkg.scripts), `README: \`${line.trim()}\``).toContain(m[1]!);
        }
      }
      expect(uses.size).toBeGreaterThan(5);
      const missing: string[] = [];
      for (const [command, flags] of uses) {
        const help = await baton([command, '--help']);
        if (help.code !== 0) {
          missing.push(`baton ${command}: not a command (${help.stderr.trim().split('\n')[0]})`);
          continue;
        }
        for (const flag of flags) if (!help.stdout.includes(flag)) missing.push(`baton ${command} ${flag}`);
      }
      expect(missing).toEqual([]);
    },
  );

  it('prints what its output samples show', { timeout: scaled(180_000) }, async () => {
    const dir = tempDir();
    const demo = await baton(['demo', '--approve', '--db', join(dir, 'b.db'), '--dir', join(dir, 'configs')], {
      timeoutMs: scaled(60_000),
    });
    expect(demo.code, demo.stderr).toBe(0);
    const samples = blocks.filter((b) => b.lang === '' && /^(\$ npx baton|\[\d+\] )/m.test(b.code));
    expect(samples.length).toBeGreaterThanOrEqual(2);
    const server = await startServe(['--port', '0', '--db', join(dir, 's.db'), '--dir', join(dir, 'served')]);
    try {
      for (const sample of samples) {
        // A sample that shows its command is that command's output (against a server here, deciding
        // with --approve where the sample answers the prompt); the others are the demo's.
        const command = /^\$ npx baton (.+)$/m.exec(sample.code)?.[1];
        let printed = demo.stdout;
        if (command) {
          const args = [...command.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
          const url = args.indexOf('--url');
          if (url >= 0) args[url + 1] = server.url;
          const out = await baton([...args, '--approve'], { timeoutMs: scaled(60_000) });
          expect(out.code, out.stderr).toBe(0);
          printed = out.stdout;
        }
        const lines = new Set(printed.split('\n').map((l) => l.trimEnd()));
        // Event lines and the answer; the run's ids and the terminal's prompt differ by run.
        const shown = sample.code.split('\n').filter((l) => /^(\[\d+\] |Answer: )/.test(l));
        expect(shown.length, `README.md:${sample.line}`).toBeGreaterThan(1);
        for (const line of shown) expect([...lines], `README.md:${sample.line}: ${line}`).toContain(line);
      }
    } finally {
      await server.stop();
    }
  });

  it('draws the lifecycle with the machine’s own states and events', () => {
    const picture = blocks.find((b) => b.lang === '' && b.code.includes('--plan_ready-->'));
    expect(picture, 'the lifecycle picture').toBeDefined();
    const machine = describeMachine(runMachine);
    const events = new Set(machine.transitions.map((t) => t.event));
    const drawn = [...picture!.code.matchAll(/--([a-z_][^>]*?)-->/g)].flatMap((m) =>
      m[1]!
        .replace(/\([^)]*\)/g, '')
        .split('|')
        .map((e) => e.trim()),
    );
    expect(drawn.length).toBeGreaterThan(8);
    for (const event of drawn) expect([...events], `README lifecycle event '${event}'`).toContain(event);
    const states = Object.keys(machine.states);
    for (const state of states)
      expect(picture!.code, `README lifecycle state '${state}'`).toMatch(new RegExp(`\\b${state}\\b`));
    // Every event a person can send or the runtime raises is drawn (the actors' own done/error are not).
    const named = [...events].filter((e) => !e.startsWith('xstate.'));
    expect(named.filter((e) => !drawn.includes(e))).toEqual([]);
  });
});
