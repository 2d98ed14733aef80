/**
 * The README's "The human side", run as written: its shell blocks (curl, then the command line,
 * for each kind of wait) run through bash, command by command, against a real `baton serve` with
 * the README's tokens and an agent that asks, mails and reads (test/cli/fixtures/human-agent.ts).
 * Each block gets a run waiting as its section says (`$RUN`); a block that starts its own run
 * sets `RUN=` to the id that start printed. Every `# → ` line says what the command before it
 * prints (`…` stands for anything); a read that races the run's progress is asked again until it
 * does, and a command line that is not shown failing must exit 0.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scaled } from '../helpers/limits.js';
import { readmeBlocks, readmeText, type ReadmeBlock } from '../helpers/readme-blocks.js';
import { readJournal } from '../helpers/mcp-journal.js';
import { MCP_SERVER } from '../helpers/mcp.js';
import { tempDir } from '../helpers/temp.js';
import { waitUntil } from '../helpers/wait-until.js';
import { startServe, type ServeChild } from './cli-child.js';
import { sh, shellEnv, shows, stepsOf } from '../helpers/readme-shell.js';

const SECTION = '## The human side';
/** The URL the README's examples name, replaced by the test server's. */
const README_URL = 'http://127.0.0.1:7420';

/** How the test readies a run for a block: what it starts, and what it waits for after. */
interface Setup {
  input: string;
  options?: Record<string, unknown>;
  /** Waits until the run's first approval says so (e.g. an expiry has escalated it). */
  until?: (approval: Record<string, unknown>) => boolean;
}

const MAIL = { input: 'Mail the team the report' };
const BUDGET = { input: 'Summarize the tickets', options: { budget: { max_llm_calls: 1 }, on_budget_exceeded: 'ask' } };

/** The run each of the section's blocks works on, by heading: its curl block, then its command-line block. */
const SETUPS: Record<string, [Setup | null, Setup]> = {
  '### Ask a person': [{ input: 'Print the report' }, { input: 'Print the report' }],
  '### Edit, then approve': [MAIL, MAIL],
  '### Respond as the tool': [MAIL, MAIL],
  // The curl block starts its own run; the command line cannot start one with options.
  '### Budget hand-over': [null, BUDGET],
  '### Policy escalation': [{ input: 'Mail everyone the report' }, { input: 'Mail everyone the report' }],
  // "An hour later": a second here, and the test waits for the escalation it brings.
  '### A question from an MCP server': [{ input: 'Rename the plan' }, { input: 'Rename the plan' }],
  '### Expiry': [
    null,
    { ...MAIL, options: { expires_in: 1000, on_expire: { escalate: 'admin' } }, until: (a) => a.role === 'admin' },
  ],
};

/** The README's block after `marker` in `lang`. */
function blockAfter(marker: string, lang: string): string {
  const readme = readmeText();
  const from = readme.indexOf(marker);
  expect(from, `README.md has '${marker}'`).toBeGreaterThanOrEqual(0);
  return new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(readme.slice(from))![1]!;
}

/** The shell blocks of the section, with their headings. */
function sectionBlocks(): ReadmeBlock[] {
  const text = readmeText();
  const start = text.split('\n').findIndex((line) => line === SECTION) + 1;
  expect(start, `README.md has '${SECTION}'`).toBeGreaterThan(0);
  const next = text.split('\n').findIndex((line, i) => i >= start && /^## /.test(line)) + 1;
  return readmeBlocks().filter((b) => b.line > start && b.line < next && b.lang === 'sh');
}

/** A command that only reads (asked again while the run has not got there yet). */
const reads = (command: string) => /^curl -s \$URL\S* -H/.test(command) || /^baton show /.test(command);
/** A command line shown failing: its expected output is an error. */
const fails = (expected: string[]) => expected.some((l) => /^baton [a-z]+: |"error"/.test(l));

describe('README: the human side', () => {
  it('runs its curl and command-line examples as the comments say', { timeout: scaled(300_000) }, async () => {
    const dir = tempDir();
    const tokens = join(dir, 'tokens.json');
    writeFileSync(tokens, blockAfter('### Tokens and tenants', 'json'));
    const effects = join(dir, 'effects.jsonl');
    const env = shellEnv(dir);

    // The note server that asks (`rename_note` answers input_required), for the MCP example.
    const journal = join(dir, 'journal.jsonl');
    const notes = `"${process.execPath}" --import tsx "${MCP_SERVER}" --journal "${journal}" --stdio --asking`;
    const server: ServeChild = await startServe(
      [
        '--port',
        '0',
        '--db',
        join(dir, 'b.db'),
        '--agent',
        'test/cli/fixtures/human-agent.ts',
        '--tokens',
        tokens,
        '--mcp',
        notes,
      ],
      { env: { HUMAN_EFFECTS: effects } },
    );
    try {
      const curlBlock = blockAfter('With curl:', 'sh').replace(/\\\n\s*/g, '');
      const tokenLines = curlBlock.split('\n').filter((l) => /^(CI|ALICE|ROOT)=/.test(l));
      expect(tokenLines).toHaveLength(3);
      const exported = /`(export BATON_URL=\S+ BATON_TOKEN=[^`\s]+)`/.exec(readmeText().split(SECTION)[1]!)?.[1];
      expect(exported, 'the section says how the command line reaches the server').toBeDefined();
      const prelude = [`URL=${server.url}`, ...tokenLines, exported!.replace(README_URL, server.url)];
      const ci = /Bearer ([^"]+)/.exec(tokenLines.find((l) => l.startsWith('CI='))!)![1]!;
      const api = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`${server.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${ci}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return (await response.json()) as Record<string, unknown>;
      };

      const blocks = sectionBlocks();
      const counts = new Map<string, number>();
      expect(blocks.map((b) => b.heading)).toEqual(Object.keys(SETUPS).flatMap((h) => [h, h]));
      for (const block of blocks) {
        const index = counts.get(block.heading) ?? 0;
        counts.set(block.heading, index + 1);
        const setup = SETUPS[block.heading]![index as 0 | 1];
        const where = `README.md:${block.line} (${block.heading})`;
        let run: string | undefined;
        if (setup) {
          run = (await api('POST', '/v1/runs?wait=true', { input: setup.input, options: setup.options })).id as string;
          if (setup.until) {
            const until = setup.until;
            await waitUntil(async () => {
              const { approvals } = (await api('GET', `/v1/runs/${run}/approvals`)) as {
                approvals: Record<string, unknown>[];
              };
              return approvals.length > 0 && until(approvals[0]!);
            }, `the run of ${where} to get there`);
          }
        }
        let started: string | undefined;
        for (const step of stepsOf(block.code)) {
          if ('setRun' in step) {
            expect(started, `${where}: RUN= follows a command that starts a run`).toBeDefined();
            run = started;
            continue;
          }
          const command = step.command.replaceAll(README_URL, server.url);
          const withRun = [...prelude, ...(run ? [`RUN=${run}`] : [])];
          let result = await sh(withRun, command, env);
          if (reads(command) && !shows(result.out, step.expected)) {
            await waitUntil(async () => {
              result = await sh(withRun, command, env);
              return shows(result.out, step.expected);
            }, `${where}: '${command}' to print what the README says`);
          }
          expect(shows(result.out, step.expected), `${where}: ${command}\nprinted:\n${result.out}`).toBe(true);
          if (/(^|\| *|\S+=\S+ )baton /.test(command) && !fails(step.expected)) {
            expect(result.code, `${where}: ${command}\n${result.out}`).toBe(0);
          }
          try {
            const printed = JSON.parse(result.out) as { id?: unknown; session_id?: unknown };
            if (typeof printed.id === 'string' && printed.session_id) started = printed.id;
          } catch {
            // Not a run: the next RUN= keeps the last one started.
          }
        }
      }
      // The mails the examples approved went out, once each; the escalated one too.
      const sent = readFileSync(effects, 'utf8').trim().split('\n');
      expect(sent.filter((l) => l.includes('the board'))).toHaveLength(2);
      // The MCP server renamed the note once per answer, with the title given.
      const renamed = readJournal(journal).filter((e) => e.kind === 'effect' && e.tool === 'rename_note');
      expect(renamed.map((e) => e.args)).toEqual([
        { title: 'plan', to: 'roadmap' },
        { title: 'plan', to: 'roadmap' },
      ]);
    } finally {
      await server.stop();
    }
  });
});
