import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/cli/index.js';
import { openDatabase } from '../../src/store/index.js';
import { tempDir } from '../helpers/temp.js';
import { baton, batonInProcess, jsonLines, startServe } from './cli-child.js';

/** A fresh database file and demo config directory, as flags. */
function place(): string[] {
  const dir = tempDir();
  return ['--db', join(dir, 'b.db'), '--dir', join(dir, 'configs')];
}

describe('baton run (in process)', () => {
  it('follows the run through its approval to the answer', async () => {
    const { code, stdout, stderr } = await baton(['run', 'Archive the stale configs', '--approve', ...place()]);

    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^\[\d+\] step 0: fs\.list/m);
    expect(stdout).toMatch(/^\[\d+\] {3}run configs\.archive \{"files":\[/m);
    expect(stdout).toMatch(/^\[\d+\] approval needed: configs\.archive/m);
    expect(stdout).toMatch(/^\[\d+\] approval approved by cli:/m);
    expect(stdout).toMatch(/^Answer: Archived 3 stale configs/m);
    expect(stdout).toMatch(/^Run run_\S+ succeeded$/m);
  });

  it('prints only JSON lines with --json, ending with a summary', async () => {
    const { code, stdout, stderr } = await baton(['run', 'Archive', '--reject', '--json', ...place()]);

    expect(code, stderr).toBe(0);
    const lines = jsonLines(stdout);
    const summary = lines.at(-1) as { type: string; run: { status: string; answer: string } };
    expect(summary.type).toBe('summary');
    expect(summary.run).toMatchObject({ status: 'succeeded', answer: expect.stringMatching(/^Nothing was archived/) });
    const events = lines.slice(0, -1) as { seq: number; type: string }[];
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.map((e) => e.type)).toContain('approval_result');
  });

  it('leaves the run waiting (exit 3) without a terminal or a flag; approve then finishes it', async () => {
    const flags = place();
    const waiting = await baton(['run', 'Archive', '--json', ...flags]);

    expect(waiting.code, waiting.stderr).toBe(3);
    expect(waiting.stderr).toMatch(/left waiting for approval .*baton approve run_/);
    // The suggested command names the file, so it works as printed.
    expect(waiting.stderr).toContain(` --db ${flags[1]}'`);
    const { run } = jsonLines(waiting.stdout).at(-1) as { run: { id: string; status: string } };
    expect(run.status).toBe('waiting_human');

    const listed = await batonInProcess(['runs', '--status', 'waiting_human', '--json', ...flags.slice(0, 2)]);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { runs: { id: string }[] }).runs.map((r) => r.id)).toEqual([run.id]);

    const approved = await baton(['approve', run.id, '--reason', 'looks right', ...flags]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toMatch(/^Approval \S+ approved by cli:/m);
    expect(approved.stdout).toMatch(new RegExp(`^Run ${run.id} succeeded$`, 'm'));

    // The run exists and waits for nothing: a conflict (exit 1), as a server answers it, not "not found".
    const again = await batonInProcess(['reject', run.id, ...flags]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/is succeeded and waits for no approval \(run\.invalid_transition\)/);
  });

  it('interrupts the active run of its session with --on-busy interrupt; refuses a busy session by default', async () => {
    const flags = place();
    const first = await baton(['run', 'Archive', '--session', 'ops', '--json', ...flags]);
    expect(first.code, first.stderr).toBe(3);
    const { run: active } = jsonLines(first.stdout).at(-1) as { run: { id: string } };
    const busy = await batonInProcess(['run', 'Archive', '--session', 'ops', '--json', ...flags]);
    expect(busy.code).not.toBe(0);
    expect(busy.stderr).toContain('session.busy');
    const bad = await batonInProcess(['run', 'Archive', '--session', 'ops', '--on-busy', 'later', ...flags]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--on-busy must be one of reject, enqueue, interrupt, not 'later'");
    const second = await baton(['run', 'Archive', '--session', 'ops', '--on-busy', 'interrupt', '--json', ...flags]);
    expect(second.code, second.stderr).toBe(3);
    const { run } = jsonLines(second.stdout).at(-1) as { run: { id: string; status: string } };
    expect(run).toMatchObject({ status: 'waiting_human' });
    const listed = await batonInProcess(['runs', '--json', ...flags.slice(0, 2)]);
    const runs = (JSON.parse(listed.stdout) as { runs: { id: string; status: string; stop_reason: string | null }[] })
      .runs;
    expect(runs.find((r) => r.id === active.id)).toMatchObject({ status: 'failed', stop_reason: 'cancelled' });
  });

  it('exits 1 when the run an approval drives then fails, as the exit table says', async () => {
    const db = ['--db', join(tempDir(), 'b.db')];
    const agent = ['--agent', 'test/cli/fixtures/doomed-agent.ts'];
    const waiting = await baton(['run', 'Launch', '--json', ...agent, ...db]);
    expect(waiting.code, waiting.stderr).toBe(3);
    const { run } = jsonLines(waiting.stdout).at(-1) as { run: { id: string } };

    const approved = await baton(['approve', run.id, ...agent, ...db]);
    expect(approved.code, approved.stderr).toBe(1);
    expect(approved.stdout).toMatch(/^Failure: planner\.invalid_output: The script has no step 1/m);
    expect(approved.stdout).toMatch(new RegExp(`^Run ${run.id} failed`, 'm'));
  });

  it('ends the run when a rejection says --terminate', async () => {
    const flags = place();
    const waiting = await batonInProcess(['run', 'Archive', '--json', ...flags]);
    expect(waiting.code, waiting.stderr).toBe(3);
    const { run } = jsonLines(waiting.stdout).at(-1) as { run: { id: string } };

    expect((await batonInProcess(['approve', run.id, '--terminate', ...flags])).code).toBe(2);
    const rejected = await batonInProcess(['reject', run.id, '--terminate', '--reason', 'no', '--json', ...flags]);

    expect(rejected.code, rejected.stderr).toBe(0);
    expect(JSON.parse(rejected.stdout)).toMatchObject({
      approval: { status: 'rejected', resolution: 'terminate', reason: 'no' },
      run: { id: run.id, status: 'failed', stop_reason: 'rejected' },
    });
  });

  it('shows a run, its steps, tool calls and events, as text and JSON', async () => {
    const flags = place();
    const db = flags.slice(0, 2);
    const { stdout } = await baton(['run', 'Archive', '--approve', '--json', ...flags]);
    const { run } = jsonLines(stdout).at(-1) as { run: { id: string } };

    const [shownJson, events] = await Promise.all([
      baton(['show', run.id, '--json', ...db]),
      baton(['events', run.id, ...db]),
    ]);
    const shown = await batonInProcess(['show', run.id, ...db]);
    const eventsJson = await batonInProcess(['events', run.id, '--json', '--after', '20', ...db]);
    const runs = await batonInProcess(['runs', ...db]);

    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^ {2}status {4}succeeded$/m);
    expect(shown.stdout).toMatch(/^ {2}2 {2}configs\.archive \{"files":.* succeeded/m);
    const detail = JSON.parse(shownJson.stdout) as { run: { id: string }; steps: unknown[]; tool_calls: unknown[] };
    expect(detail.run.id).toBe(run.id);
    expect(detail.steps).toHaveLength(4);
    expect(detail.tool_calls).toHaveLength(5);
    expect(events.stdout).toMatch(/^\[1\] run created: Archive$/m);
    expect(events.stdout.trim().split('\n').at(-1)).toMatch(/executing → succeeded$/);
    expect(jsonLines(eventsJson.stdout)[0]).toMatchObject({ run_id: run.id, seq: 21 });
    expect(runs.stdout).toMatch(new RegExp(`^${run.id} +succeeded`, 'm'));
  });

  it('shows control characters of inputs and answers as escapes, never raw', async () => {
    const hostile = 'Archive \u001b]0;pwned\u0007\u001b[2J\u009b31m now';
    const outcome = await batonInProcess(['run', hostile, '--reject', ...place()]);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout).toContain('Archive \\x1b]0;pwned\\x07\\x1b[2J\\x9b31m now');
    // eslint-disable-next-line no-control-regex -- looking for raw control characters is the test
    expect(outcome.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    const json = await batonInProcess(['run', hostile, '--reject', '--json', ...place()]);
    // JSON keeps the text exactly, escaped the JSON way.
    expect(jsonLines(json.stdout)[0]).toMatchObject({ type: 'run.created', data: { input: hostile } });
  });

  it('shows bidi controls in the approval question as escapes, so the question reads as sent', async () => {
    const flags = place();
    const dir = flags[3]!;
    mkdirSync(dir, { recursive: true });
    // Shown raw, U+202E would render this name as "old-exe.json…" read backwards.
    const name = 'old-\u202enosj.exe\u2066x\u2069.json';
    const old = new Date(Date.now() - 400 * 86_400_000);
    writeFileSync(join(dir, name), JSON.stringify({ updated_at: old.toISOString() }));
    utimesSync(join(dir, name), old, old);
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let shown = '';
    stdout.on('data', (chunk: Buffer) => {
      shown += chunk.toString();
      if (/\[y\/N\] $/.test(shown)) stdin.write('n\n');
    });
    const io: CliIo = { stdin, stdout, stderr, interactive: true };

    const code = await runCli(['run', 'Archive the stale configs', ...flags], io);

    expect(code, String(stderr.read() ?? '')).toBe(0);
    const question = /^Approve configs\.archive .*\? \[y\/N\] /m.exec(shown)?.[0];
    expect(question).toContain('old-\\u202enosj.exe\\u2066x\\u2069.json');
    expect(shown).not.toMatch(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
    expect(shown).toMatch(/^Answer: Nothing was archived/m);
  });

  it('says a database file that is not there does not exist, instead of reading it as empty', async () => {
    const db = place().slice(0, 2);
    for (const command of [['runs'], ['show', 'run_x'], ['events', 'run_x']]) {
      const outcome = await batonInProcess([...command, ...db]);
      expect(outcome.code, command.join(' ')).toBe(1);
      expect(outcome.stderr).toContain(`The database '${db[1]}' does not exist`);
    }
    expect(existsSync(db[1]!)).toBe(false);
  });

  it('names the path when --db or the demo directory cannot be what it should be', async () => {
    const dir = tempDir();
    const plain = join(dir, 'notes.txt');
    writeFileSync(plain, 'not a database\n'.repeat(100));
    const asDir = await batonInProcess(['runs', '--db', dir]);
    expect(asDir.code).toBe(1);
    expect(asDir.stderr).toContain(`Cannot open the database '${dir}'`);
    expect(asDir.stderr).toContain('(store.open_failed)');
    const notSqlite = await batonInProcess(['runs', '--db', plain]);
    expect(notSqlite.stderr).toContain(`'${plain}' is not a Baton database, or is damaged`);
    expect(notSqlite.stderr).toContain('(store.corrupt)');
    const demoDir = await batonInProcess(['demo', '--approve', '--db', join(dir, 'b.db'), '--dir', plain]);
    expect(demoDir.code).toBe(1);
    expect(demoDir.stderr).toContain(`Cannot use '${plain}' as the demo's config directory`);
    expect(demoDir.stderr).not.toContain('internal.error');
  });

  it('answers with the documented exit codes on usage errors and missing runs', async () => {
    const db = place().slice(0, 2);
    openDatabase(db[1]!).sqlite.close();
    const child = await baton(['show', 'run_missing', ...db]);
    expect(child.code).toBe(4);
    expect(child.stderr).toMatch(/^baton show: Run 'run_missing' does not exist \(run\.not_found\)$/m);

    const outcomes = [];
    for (const args of [
      [],
      ['frobnicate'],
      ['run', ...db],
      ['run', 'x', '--approve', '--reject', ...db],
      ['runs', '--limit', 'ten', ...db],
      ['runs', '--status', 'done', ...db],
      ['show', 'run_missing', '--url', 'http://127.0.0.1:9', '--db', 'x.db'],
      ['events', 'run_missing', ...db],
      ['approve', 'run_missing', 'approval_1', ...db],
    ]) {
      outcomes.push(await batonInProcess(args));
    }
    expect(outcomes.map((o) => o.code)).toEqual([2, 2, 2, 2, 2, 2, 2, 4, 4]);
    expect(outcomes[3]!.stderr).toMatch(/--approve and --reject cannot be used together/);

    // Negative numbers are values with their own check, and limits are the server's in process too.
    const bounds = [];
    for (const args of [
      ['runs', '--limit', '-1', ...db],
      ['runs', '--limit', '201', ...db],
      ['events', 'run_missing', '--after', '-1', ...db],
    ]) {
      bounds.push(await batonInProcess(args));
    }
    expect(bounds.map((o) => o.code)).toEqual([2, 2, 2]);
    expect(bounds[0]!.stderr).toMatch(/--limit must be a positive integer, not '-1'/);
    expect(bounds[1]!.stderr).toMatch(/--limit must be at most 200, not 201/);
    expect(bounds[2]!.stderr).toMatch(/--after must be a positive integer, not '-1'/);
  });

  it('writes an error as one JSON object under --json, with the exit code of its failure', async () => {
    const db = place().slice(0, 2);
    openDatabase(db[1]!).sqlite.close();
    const missing = await baton(['show', 'run_missing', '--json', ...db]);
    expect(missing.code).toBe(4);
    expect(JSON.parse(missing.stderr)).toEqual({
      error: { code: 'run.not_found', kind: 'user', message: "Run 'run_missing' does not exist" },
    });
    const usage = await batonInProcess(['runs', '--limit', 'ten', '--json', ...db]);
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stderr)).toEqual({
      error: { code: 'usage', kind: 'user', message: "--limit must be a positive integer, not 'ten'" },
      hint: "Run 'baton runs --help' for usage.",
    });
    // Against a server, the same object as in process: the API's error body, no HTTP status.
    const server = await startServe(['--port', '0', '--db', join(tempDir(), 's.db'), '--dir', join(tempDir(), 'c')]);
    try {
      const remote = await baton(['show', 'run_missing', '--json', '--url', server.url]);
      expect(remote.code).toBe(4);
      expect(JSON.parse(remote.stderr)).toEqual(JSON.parse(missing.stderr));
    } finally {
      await server.stop();
    }
    for (const args of [
      ['demo', '--force', '--json'],
      ['frobnicate', '--json'],
      ['run', '--approve', '--json'],
    ]) {
      const outcome = await batonInProcess(args);
      expect(outcome.code, args.join(' ')).toBe(2);
      expect(JSON.parse(outcome.stderr), args.join(' ')).toMatchObject({ error: { code: 'usage' } });
    }
    // Without --json, the same failure is one line of text.
    expect((await batonInProcess(['runs', '--limit', 'ten', ...db])).stderr).toBe(
      "baton runs: --limit must be a positive integer, not 'ten'\nRun 'baton runs --help' for usage.\n",
    );
  });

  it('suggests the flag or command a typo most likely meant', async () => {
    const cases = [
      [['runs', '--jsn'], "baton runs: Unknown option '--jsn'; did you mean '--json'?"],
      [['prune', '--dry', '--older-than', '30d'], "baton prune: Unknown option '--dry'; did you mean '--dry-run'?"],
      [['show', 'run_x', '--tokne', 't'], "baton show: Unknown option '--tokne'; did you mean '--token'?"],
      [['runs', '--frobnicate'], "baton runs: Unknown option '--frobnicate'\n"],
      [['rnus'], "baton: unknown command 'rnus'; did you mean 'runs'?"],
      [['approev', 'run_x'], "baton: unknown command 'approev'; did you mean 'approve'?"],
    ] as const;
    for (const [args, message] of cases) {
      const outcome = await batonInProcess([...args]);
      expect(outcome.code, args.join(' ')).toBe(2);
      expect(outcome.stderr, args.join(' ')).toContain(message);
    }
  });

  it('documents every command and the exit codes in --help', async () => {
    const commands = ['serve', 'run', 'runs', 'show', 'events', 'approve', 'reject', 'cancel'];
    const helps = [];
    for (const command of commands) helps.push(await batonInProcess([command, '--help']));
    for (const [i, help] of helps.entries()) {
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^Usage: baton ${commands[i]}`));
      expect(help.stdout).toMatch(/^ {2}3 {4}the run is waiting for a human/m);
    }
  });
});

describe('a decision in process on a run started with --dir', () => {
  it('acts in the directory the run listed and read, not in the default one, and refuses another --dir', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'in.db');
    const dir = join(cwd, 'in-configs');
    const started = await baton(['run', 'Archive the stale configs', '--db', db, '--dir', dir, '--json'], { cwd });
    expect(started.code, started.stderr).toBe(3);
    const runId = (jsonLines(started.stdout).at(-1) as { run: { id: string } }).run.id;

    const elsewhere = await baton(['approve', runId, '--db', db, '--dir', join(cwd, 'other')], { cwd });
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toContain(`acts in ${dir}`);

    // No --dir, as the hint says: the approved archive happens where the run looked.
    const approved = await baton(['approve', runId, '--db', db], { cwd });
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toMatch(/succeeded/);
    for (const file of ['service-b.json', 'service-d.json', 'service-f.json']) {
      expect(existsSync(join(dir, 'archive', file)), file).toBe(true);
    }
    expect(existsSync(join(cwd, '.baton', 'demo-configs'))).toBe(false);
  });
});
