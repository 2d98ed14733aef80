/**
 * The human side on the command line, from the built CLI: `baton run` reads the answer to a
 * question from piped stdin (or leaves it waiting), `baton answer`, `baton approve --edit` and
 * `--respond`, `baton extend` and `baton end`, in process on a database file (the command drives
 * the run on) and against `baton serve` (a policy's escalation needs an admin's token).
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/cli/index.js';
import { createRuntime } from '../../src/index.js';
import { scaled } from '../helpers/limits.js';
import { readJsonLines } from '../helpers/json-lines.js';
import { REPO_ROOT } from '../helpers/run-node.js';
import type { Json } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';
import { baton, batonInProcess, cliArgs, jsonLines, startServe, type CliOutcome } from './cli-child.js';
import humanAgent from './fixtures/human-agent.js';

const AGENT = ['--agent', 'test/cli/fixtures/human-agent.ts'];

/** A fresh database and effects file: the flags of an in-process command, and the child's environment. */
function place() {
  const dir = tempDir();
  const effects = join(dir, 'effects.jsonl');
  writeFileSync(effects, '');
  return { flags: ['--db', join(dir, 'b.db'), ...AGENT], env: { HUMAN_EFFECTS: effects }, effects, dir };
}

/** This process's environment without the model's, the server's and the failpoints' settings (as `baton()` runs). */
function quietEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(OPENAI_|BATON_)/.test(name)));
}

/** Runs `baton <args>` with `input` piped to its stdin, to its end. */
function fed(args: string[], input: string, env: Record<string, string> = {}) {
  return new Promise<CliOutcome>((resolve) => {
    const child = execFile(
      process.execPath,
      cliArgs(args),
      { cwd: REPO_ROOT, env: { ...quietEnv(), ...env }, encoding: 'utf8', timeout: scaled(30_000) },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
    child.stdin?.end(input);
  });
}

/** The run a `baton run --json` printed last (its summary). */
const summaryRun = (outcome: CliOutcome) => (jsonLines(outcome.stdout).at(-1) as { run: Json }).run;

describe('the human side on the command line, in process', () => {
  it('reads the answer to a question from piped stdin, asking again while it does not fit', async () => {
    const { flags, env } = place();
    const outcome = await fed(['run', 'ask', ...flags], '0\n3\n', env);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout).toMatch(/^\[\d+\] question: How many copies\?$/m);
    expect(outcome.stdout).toMatch(
      /^Question: How many copies\? \(an answer fitting \{"type":"integer","minimum":1\}\)$/m,
    );
    expect(outcome.stderr).toMatch(/The answer does not fit the question's schema; try again/);
    expect(outcome.stdout).toMatch(/^\[\d+\] answered by cli:\S+: 3$/m);
    expect(outcome.stdout).toMatch(/^Answer: told: Answer from cli:\S+:$/m);
    expect(outcome.stdout).toMatch(/^Run run_\S+ succeeded$/m);
    // Choices are answered as text, piped the same way.
    const picked = await fed(['run', 'pick', ...flags], 'green\n', env);
    expect(picked.code, picked.stderr).toBe(0);
    expect(picked.stdout).toMatch(/^\[\d+\] question: Which colour\? \[red \| green \| blue\]$/m);
    expect(picked.stdout).toMatch(/^green$/m);
  });

  it('asks the question on a terminal, again while the answer does not fit; with --json it leaves it waiting', async () => {
    const { flags } = place();
    const terminal = (answers: string[]) => {
      const stdin = new PassThrough();
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      let shown = '';
      let prompts = 0;
      stdout.on('data', (chunk: Buffer) => {
        shown += chunk.toString();
        const asked = shown.split('Your answer: ').length - 1;
        for (; prompts < asked; prompts += 1) stdin.write(`${answers[prompts] ?? ''}\n`);
      });
      const io: CliIo = { stdin, stdout, stderr, interactive: true };
      return { io, shown: () => shown, errors: () => String(stderr.read() ?? '') };
    };
    const asked = terminal(['many', '4']);
    const code = await runCli(['run', 'ask', ...flags], asked.io);
    expect(code, asked.errors()).toBe(0);
    expect(asked.shown().split('Your answer: ')).toHaveLength(3);
    expect(asked.shown()).toMatch(/^Answer: told: Answer from cli:\S+:\n4$/m);

    const json = terminal(['4']);
    expect(await runCli(['run', 'ask', '--json', ...flags], json.io)).toBe(3);
    expect(json.shown()).not.toContain('Your answer: ');
    expect(jsonLines(json.shown()).at(-1)).toMatchObject({ type: 'summary', run: { wait_reason: 'input' } });
  });

  it('leaves a question waiting without an answer to read; baton answer answers it once', async () => {
    const { flags, env } = place();
    const waiting = await baton(['run', 'ask', '--json', ...flags], { env });
    expect(waiting.code, waiting.stderr).toBe(3);
    const run = summaryRun(waiting);
    expect(run).toMatchObject({
      status: 'waiting_human',
      wait_reason: 'input',
      pending_input: { id: run.pending_approval_id, question: 'How many copies?', choices: null, role: 'approve' },
    });
    expect(waiting.stderr).toMatch(/left waiting for an answer to input \S+: How many copies\?/);
    expect(waiting.stderr).toContain(`baton answer ${run.id} "<text>" --db ${flags[1]} --agent ${AGENT[1]}`);
    // No stdin at all (in process here) leaves it waiting the same way, in text too.
    const text = await batonInProcess(['run', 'ask', ...flags]);
    expect(text.code, text.stderr).toBe(3);
    expect(text.stdout).toMatch(/^Question: How many copies\?/m);
    expect(text.stdout).toMatch(/^Run run_\S+ waiting_human, input \S+$/m);

    const shown = await batonInProcess(['show', run.id, '--db', flags[1]!]);
    expect(shown.stdout).toMatch(/^ {2}waiting {3}input: input \S+ \(baton answer run_\S+ <text>\)$/m);
    expect(shown.stdout).toMatch(/^ {2}question {2}How many copies\? \(an answer fitting /m);

    const bad = await baton(['answer', run.id, '0', '--json', ...flags], { env });
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr)).toMatchObject({
      error: { code: 'input.invalid', details: { issues: [expect.objectContaining({ code: 'too_small' })] } },
    });
    expect((await batonInProcess(['show', run.id, '--json', '--db', flags[1]!])).stdout).toContain(
      '"status":"waiting_human"',
    );
    const answered = await baton(['answer', run.id, '3', '--reason', 'as usual', ...flags], { env });
    expect(answered.code, answered.stderr).toBe(0);
    expect(answered.stdout).toMatch(/^Input \S+ answered by cli:\S+$/m);
    expect(answered.stdout).toMatch(new RegExp(`^Run ${run.id} succeeded$`, 'm'));
    const again = await baton(['answer', run.id, String(run.pending_input.id), '4', ...flags], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('(approval.already_decided)');
    const none = await batonInProcess(['answer', run.id, '4', ...flags]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/is succeeded and waits for no answer \(run\.invalid_transition\)/);

    // --value takes JSON: the answer to another question, as one object with --json.
    const next = summaryRun(await baton(['run', 'ask', '--json', ...flags], { env }));
    const valued = await baton(['answer', next.id, '--value', '7', '--json', ...flags], { env });
    expect(valued.code, valued.stderr).toBe(0);
    expect(JSON.parse(valued.stdout)).toMatchObject({
      approval: { kind: 'input', status: 'approved', resolution: 'answer', answer: { answer: 7 } },
      run: { id: next.id, status: 'succeeded', pending_input: null },
    });
    expect((await batonInProcess(['answer', next.id, '--value', '{oops', ...flags])).code).toBe(2);
    // `--json <json>` as the issue writes it: the answer read as JSON, the output one object.
    const third = summaryRun(await baton(['run', 'ask', '--json', ...flags], { env }));
    const flagged = await baton(['answer', third.id, '--json', '8', ...flags], { env });
    expect(flagged.code, flagged.stderr).toBe(0);
    expect(JSON.parse(flagged.stdout)).toMatchObject({
      approval: { answer: { answer: 8 } },
      run: { status: 'succeeded' },
    });
  });

  it('approves with edited arguments, or responds in place of the call, checked by the tool', async () => {
    const { flags, env, effects } = place();
    const edited = summaryRun(await baton(['run', 'send', '--json', ...flags], { env }));
    expect(edited.status).toBe('waiting_human');
    const misfit = await baton(['approve', edited.id, '--edit', '{"to":42}', ...flags], { env });
    expect(misfit.code).toBe(1);
    expect(misfit.stderr).toContain('(input.invalid)');
    for (const args of [
      ['reject', edited.id, '--edit', '{"to":"x"}'],
      ['approve', edited.id, '--edit', '{"to":"x"}', '--respond', '{}'],
      ['approve', edited.id, '--call', 'c0'],
      ['approve', edited.id, '--edit', 'not json'],
    ]) {
      expect((await batonInProcess([...args, ...flags])).code, args.join(' ')).toBe(2);
    }
    const approved = await baton(
      [
        'approve',
        edited.id,
        '--edit',
        '{"to":"ops"}',
        '--call',
        `${edited.id}.s0.c0`,
        '--reason',
        'narrower',
        '--json',
        ...flags,
      ],
      { env },
    );
    expect(approved.code, approved.stderr).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({
      approval: { status: 'approved', resolution: 'edit', reason: 'narrower' },
      run: { status: 'succeeded' },
    });
    const shown = JSON.parse((await batonInProcess(['show', edited.id, '--json', '--db', flags[1]!])).stdout);
    expect(shown.tool_calls[0]).toMatchObject({
      args: { to: 'ops' },
      edited: { proposed_args: { to: 'the team' }, reason: 'narrower' },
    });

    const responded = summaryRun(await baton(['run', 'send', '--json', ...flags], { env }));
    const given = await baton(['approve', responded.id, '--respond', '{"sent":"by hand"}', ...flags], { env });
    expect(given.code, given.stderr).toBe(0);
    expect(given.stdout).toMatch(/^Approval \S+ approved \(respond\) by cli:\S+$/m);
    expect(given.stdout).toMatch(/^Answer: told: Not run: cli:\S+ gave this result/m);
    expect(readJsonLines(effects)).toEqual([{ to: 'ops' }]);
  });

  it('extends a budget that ran out (not below what is used) or ends the run', async () => {
    const { flags, env, dir } = place();
    // Runs started with the option by an application on the same file, then left waiting.
    const runtime = createRuntime({
      database: join(dir, 'b.db'),
      planner: humanAgent.planner!,
      tools: humanAgent.tools,
      agent: humanAgent.name,
      recover: false,
    });
    const options = { budget: { maxLlmCalls: 1 }, onBudgetExceeded: 'ask' as const };
    const first = await runtime.wait((await runtime.start({ input: 'read', options })).id);
    const second = await runtime.wait((await runtime.start({ input: 'read', options })).id);
    await runtime.close();
    expect(first).toMatchObject({ status: 'waiting_human', waitReason: 'budget' });

    const shown = await batonInProcess(['show', first.id, '--db', flags[1]!]);
    expect(shown.stdout).toMatch(/^ {2}waiting {3}budget: approval \S+ \(baton extend or baton end\)$/m);
    const lower = await baton(['extend', first.id, '--max-llm-calls', '0', '--json', ...flags], { env });
    expect(lower.code).toBe(1);
    expect(JSON.parse(lower.stderr)).toMatchObject({
      error: { code: 'input.invalid', details: { key: 'max_llm_calls', limit: 0, used: 1 } },
    });
    expect((await batonInProcess(['extend', first.id, ...flags])).code).toBe(2);
    expect((await batonInProcess(['extend', first.id, '--max-llm-calls', 'many', ...flags])).code).toBe(2);
    expect((await batonInProcess(['extend', first.id, '--timeout', '30', ...flags])).code).toBe(2);
    const extended = await baton(['extend', first.id, '--max-llm-calls', '5', '--timeout', '1h', ...flags], { env });
    expect(extended.code, extended.stderr).toBe(0);
    expect(extended.stdout).toMatch(/^Approval \S+ approved \(extend\) by cli:\S+$/m);
    expect(extended.stdout).toMatch(new RegExp(`^Run ${first.id} succeeded$`, 'm'));

    const ended = await baton(['end', second.id, '--reason', 'enough', '--json', ...flags], { env });
    expect(ended.code, ended.stderr).toBe(0);
    expect(JSON.parse(ended.stdout)).toMatchObject({
      approval: { status: 'rejected', resolution: 'end', reason: 'enough' },
      run: { status: 'failed', stop_reason: 'budget_exceeded' },
    });
  });
});

describe('the human side on the command line, against a server', () => {
  it('answers, edits, extends and ends over HTTP; an escalation to admin needs an admin token', async () => {
    const { env, effects, dir } = place();
    const tokens = join(dir, 'tokens.json');
    writeFileSync(
      tokens,
      JSON.stringify({
        tokens: [
          { token: 'tok-ci-0123456789abcdef', tenant: 'acme', roles: ['submit', 'view'], name: 'ci' },
          { token: 'tok-alice-0123456789abcd', tenant: 'acme', roles: ['approve', 'view'], name: 'alice' },
          { token: 'tok-root-0123456789abcde', tenant: 'acme', roles: ['admin'], name: 'root' },
        ],
      }),
    );
    const server = await startServe(['--port', '0', '--db', join(dir, 's.db'), ...AGENT, '--tokens', tokens], { env });
    const as = (token: string) => ['--url', server.url, '--token', token];
    const CI = as('tok-ci-0123456789abcdef');
    const ALICE = as('tok-alice-0123456789abcd');
    const ROOT = as('tok-root-0123456789abcde');
    try {
      const asked = await fed(['run', 'ask', ...ROOT], '2\n');
      expect(asked.code, asked.stderr).toBe(0);
      expect(asked.stdout).toMatch(/^\[\d+\] answered by root: 2$/m);

      const waiting = summaryRun(await baton(['run', 'ask', '--json', ...CI]));
      expect(waiting.pending_input).toMatchObject({ question: 'How many copies?' });
      const answered = await baton(['answer', waiting.id, '5', '--json', ...ALICE]);
      expect(answered.code, answered.stderr).toBe(0);
      expect(JSON.parse(answered.stdout)).toMatchObject({ approval: { decided_by: 'alice', answer: { answer: 5 } } });
      const forbidden = await baton(['answer', waiting.id, String(waiting.pending_input.id), '6', ...CI]);
      expect(forbidden.code).toBe(1);
      expect(forbidden.stderr).toContain('(auth.forbidden)');

      const sent = summaryRun(await baton(['run', 'send', '--json', ...CI]));
      const edited = await baton(['approve', sent.id, '--edit', '{"to":"ops"}', ...ALICE]);
      expect(edited.code, edited.stderr).toBe(0);
      expect(edited.stdout).toMatch(/^Approval \S+ approved \(edit\) by alice$/m);

      // --approve with a token that may not decide: the run is left waiting for one that may.
      const unapproved = await baton(['run', 'escalate', '--approve', ...CI]);
      expect(unapproved.code, unapproved.stderr).toBe(3);
      expect(unapproved.stderr).toMatch(/lacks the role 'approve'/);
      expect(unapproved.stderr).toMatch(/left waiting for approval \S+: this token may not decide it/);
      const escalated = summaryRun(await baton(['run', 'escalate', '--json', ...CI]));
      expect(escalated).toMatchObject({ status: 'waiting_human', wait_reason: 'policy' });
      const refused = await baton(['approve', escalated.id, '--json', ...ALICE]);
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stderr)).toMatchObject({
        error: { code: 'auth.forbidden', details: { required_role: 'admin' } },
      });
      const approved = await baton(['approve', escalated.id, ...ROOT]);
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stdout).toMatch(/^Approval \S+ approved by root$/m);

      // A budget hand-over: the run is started with the option over the API.
      const start = async () => {
        const response = await fetch(`${server.url}/v1/runs?wait=true`, {
          method: 'POST',
          headers: { authorization: 'Bearer tok-ci-0123456789abcdef', 'content-type': 'application/json' },
          body: JSON.stringify({ input: 'read', options: { budget: { max_llm_calls: 1 }, on_budget_exceeded: 'ask' } }),
        });
        expect(response.status).toBe(201);
        return (await response.json()) as { id: string; wait_reason: string };
      };
      const budget = await start();
      expect(budget.wait_reason).toBe('budget');
      const extended = await baton(['extend', budget.id, '--max-llm-calls', '4', '--json', ...ALICE]);
      expect(extended.code, extended.stderr).toBe(0);
      expect(JSON.parse(extended.stdout)).toMatchObject({
        approval: { resolution: 'extend', answer: { limits: { max_llm_calls: 4 } } },
      });
      const ended = await baton(['end', (await start()).id, ...ALICE]);
      expect(ended.code, ended.stderr).toBe(0);
      expect(ended.stdout).toMatch(/^Approval \S+ rejected \(end\) by alice$/m);
      await expect
        .poll(async () => (await baton(['show', budget.id, '--json', ...CI])).stdout, { timeout: scaled(30_000) })
        .toContain('"status":"succeeded"');
      await expect
        .poll(() => readJsonLines(effects), { timeout: scaled(30_000) })
        .toEqual(expect.arrayContaining([{ to: 'ops' }, { to: 'everyone' }]));
    } finally {
      await server.stop();
    }
  });

  it('lists the new commands in baton help, each with its usage', async () => {
    const help = await batonInProcess(['help']);
    for (const command of ['answer', 'extend', 'end']) {
      expect(help.stdout).toMatch(new RegExp(`^ {2}${command} <run>`, 'm'));
      const usage = await batonInProcess([command, '--help']);
      expect(usage.code).toBe(0);
      expect(usage.stdout).toMatch(new RegExp(`^Usage: baton ${command} <run>`));
      expect(usage.stdout).toMatch(/^ {2}3 {4}the run is waiting for a human/m);
    }
    expect((await batonInProcess(['approve', '--help'])).stdout).toMatch(/--edit <json>[\s\S]*--respond <json>/);
  });
});
