/** `baton serve --mcp "<command>"`: an MCP server's tools join the agent's, in a real serve process. */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseMcpFlag, splitCommand, toMcpServer } from '../../src/cli/mcp-flag.js';
import { readJournal } from '../helpers/mcp-journal.js';
import { MCP_SERVER } from '../helpers/mcp.js';
import { waitUntil } from '../helpers/wait-until.js';
import { tempDir } from '../helpers/temp.js';
import { execFile } from 'node:child_process';
import { REPO_ROOT } from '../helpers/run-node.js';
import { baton, cliArgs, startServe, type ServeChild } from './cli-child.js';
import { scaled } from '../helpers/limits.js';

let server: ServeChild | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

describe('baton serve --mcp', () => {
  it('splits a command line like a shell (quotes, escapes) and takes http(s) URLs as Streamable HTTP', () => {
    expect(splitCommand(`node  "my server.js" --name 'a b' c\\ d ""`)).toEqual([
      'node',
      'my server.js',
      '--name',
      'a b',
      'c d',
      '',
    ]);
    expect(toMcpServer('npx -y some-server --flag')).toEqual({ command: 'npx', args: ['-y', 'some-server', '--flag'] });
    expect(toMcpServer('https://tools.example.com/mcp')).toEqual({ url: 'https://tools.example.com/mcp' });
    expect(() => splitCommand('node "open')).toThrow(/unclosed/);
    expect(() => toMcpServer('   ')).toThrow(/--mcp needs/);
  });

  it("takes a leading <name>= as the server's name and its tools' prefix", () => {
    expect(parseMcpFlag('files=npx -y some-server')).toEqual({
      spec: { command: 'npx', args: ['-y', 'some-server'] },
      name: 'files',
    });
    expect(parseMcpFlag('crm=https://crm.example.com/mcp?a=b')).toEqual({
      spec: { url: 'https://crm.example.com/mcp?a=b' },
      name: 'crm',
    });
    // No name: a URL's or an option's `=` is not one.
    expect(parseMcpFlag('https://tools.example.com/mcp?x=1')).toEqual({
      spec: { url: 'https://tools.example.com/mcp?x=1' },
    });
    expect(parseMcpFlag('node server.js --port=1')).toEqual({
      spec: { command: 'node', args: ['server.js', '--port=1'] },
    });
    expect(() => parseMcpFlag('files=  ')).toThrow(/--mcp files= needs a command line/);
  });

  it('adds two servers with the same tool names under their names, and says what it left out; unnamed, they collide', async () => {
    const dir = tempDir();
    const journal = join(dir, 'journal.jsonl');
    const command = `"${process.execPath}" --import tsx "${MCP_SERVER}" --journal "${journal}" --stdio`;
    const db = join(dir, 'baton.db');
    const agent = ['--agent', 'test/cli/fixtures/mcp-agent.ts'];
    const collided = await baton(['serve', '--port', '0', '--db', db, ...agent, '--mcp', command, '--mcp', command], {
      timeoutMs: scaled(60_000),
    });
    expect(collided.code).toBe(2);
    expect(collided.stderr).toMatch(/Two tools are named 'list_notes'.*--mcp <name>=<command or url>/);

    server = await startServe([
      '--port',
      '0',
      '--db',
      db,
      ...agent,
      '--mcp',
      `a=${command}`,
      '--mcp',
      `b=${command} --refusing`,
    ]);
    expect(server.output()).toMatch(/^Agent: note-taker \(planner: .*; 13 tools, MCP: a, b\)$/m);
    expect(server.output()).toMatch(/^MCP tool left out: b: deep_research \(it requires task-augmented execution/m);
    const tools = (await (await fetch(`${server.url}/v1/tools`)).json()) as {
      tools: { name: string; origin: { server: string; tool: string } }[];
    };
    const puts = tools.tools.filter((t) => t.origin.tool === 'put_note');
    expect(puts.map((t) => [t.name, t.origin.server])).toEqual([
      ['a.put_note', 'a'],
      ['b.put_note', 'b'],
    ]);
    expect(tools.tools.map((t) => t.name)).toContain('b.research');
    expect(tools.tools.map((t) => t.name)).not.toContain('b.deep_research');
  });

  it('runs an agent module that connects to an MCP server itself, and exits when the run is over', async () => {
    const dir = tempDir();
    const journal = join(dir, 'journal.jsonl');
    const outcome = await baton(
      ['run', 'note it', '--json', '--agent', 'test/cli/fixtures/mcp-module-agent.ts', '--db', join(dir, 'baton.db')],
      { env: { MCP_JOURNAL: journal }, timeoutMs: scaled(60_000) },
    );
    // Exited by itself (the toolset's server process does not hold it), with the run's outcome.
    expect(outcome.code).toBe(0);
    const summary = JSON.parse(outcome.stdout.trim().split('\n').at(-1)!) as { run: { id: string; status: string } };
    expect(summary.run.status).toBe('succeeded');
    expect(
      readJournal(journal)
        .filter((e) => e.kind === 'call')
        .map((e) => [e.tool, e.run_id]),
    ).toEqual([['put_note', summary.run.id]]);
    // In process, `baton tools` lists the module's tools with their MCP origin.
    const listed = await baton(['tools', '--json', '--agent', 'test/cli/fixtures/mcp-module-agent.ts'], {
      env: { MCP_JOURNAL: journal },
      timeoutMs: scaled(60_000),
    });
    expect(listed.code).toBe(0);
    const put = (JSON.parse(listed.stdout) as { tools: { name: string; origin: unknown }[] }).tools.find(
      (t) => t.name === 'put_note',
    );
    expect(put?.origin).toMatchObject({ kind: 'mcp', server: 'notes', tool: 'put_note' });
  });

  it("serves an agent with a stdio server's tools: listed with their mapping, called by runs, closed on stop", async () => {
    const dir = tempDir();
    const journal = join(dir, 'journal.jsonl');
    const command = `"${process.execPath}" --import tsx "${MCP_SERVER}" --journal "${journal}" --stdio`;
    server = await startServe([
      '--port',
      '0',
      '--db',
      join(dir, 'baton.db'),
      '--agent',
      'test/cli/fixtures/mcp-agent.ts',
      '--mcp',
      command,
    ]);
    expect(server.output()).toMatch(/^Agent: note-taker \(planner: .*; 6 tools, MCP: notes\)$/m);

    const tools = (await (await fetch(`${server.url}/v1/tools`)).json()) as { tools: Record<string, unknown>[] };
    expect(tools.tools.map((t) => [t.name, t.effect, t.risk])).toEqual(
      expect.arrayContaining([
        ['put_note', 'idempotent', 'low'],
        ['list_notes', 'read', 'low'],
        ['send_mail', 'unsafe', 'high'],
      ]),
    );
    // The same through the command line: a table naming the server, and the API's JSON.
    const table = await baton(['tools', '--url', server.url]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^send_mail\s+unsafe\s+high\s+untrusted\s+MCP notes: send_mail$/m);
    expect(table.stdout).toMatch(/^list_notes\s+read\s+low\s+untrusted\s+MCP notes: list_notes$/m);
    const json = await baton(['tools', '--json', '--url', server.url]);
    expect(JSON.parse(json.stdout)).toEqual(tools);
    const reply = await fetch(`${server.url}/v1/runs?wait=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'note the standup' }),
    });
    const run = (await reply.json()) as { id: string; status: string; answer: string };
    expect(run).toMatchObject({ status: 'succeeded', answer: 'noted' });
    const calls = readJournal(journal).filter((e) => e.kind === 'call');
    expect(calls.map((e) => [e.tool, e.run_id])).toEqual([
      ['put_note', run.id],
      ['list_notes', run.id],
    ]);
    const pid = calls[0]!.pid;
    await server.stop();
    server = undefined;
    // Stopping the server closes the connection: the stdio server's process is gone.
    await waitUntil(() => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    }, 'the MCP server process to exit');
  });

  it("takes the answers to a server's questions over HTTP, with baton answer --url, and in another process", async () => {
    const dir = tempDir();
    const journal = join(dir, 'journal.jsonl');
    const db = join(dir, 'baton.db');
    const command = `"${process.execPath}" --import tsx "${MCP_SERVER}" --journal "${journal}" --stdio --asking`;
    const agent = ['--agent', 'test/cli/fixtures/mcp-asking-agent.ts'];
    server = await startServe(['--port', '0', '--db', db, ...agent, '--mcp', command]);
    const api = async (method: string, path: string, body?: unknown) => {
      const reply = await fetch(`${server!.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's JSON, read field by field below
      return { status: reply.status, body: (await reply.json()) as Record<string, any> };
    };
    const effects = (tool: string) =>
      readJournal(journal)
        .filter((e) => e.kind === 'effect' && e.tool === tool)
        .map((e) => e.args);
    const settled = async (id: string) => {
      await waitUntil(async () => (await api('GET', `/v1/runs/${id}`)).body.status === 'succeeded', 'the run');
    };

    // input_required: the run waits; the answer goes to the route of its question.
    const renamed = (await api('POST', '/v1/runs?wait=true', { input: 'rename_note' })).body;
    expect(renamed).toMatchObject({ status: 'waiting_human', wait_reason: 'input' });
    expect(renamed.pending_input).toMatchObject({
      question: "New title for 'plan'?",
      from: { tool: 'rename_note', server: 'notes', in_flight: false },
    });
    const inputs = `/v1/runs/${renamed.id}/inputs/${renamed.pending_input.id}`;
    const refused = await api('POST', inputs, { answer: { title: '' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('input.invalid');
    expect((await api('POST', inputs, { answer: { title: 'roadmap' } })).status).toBe(200);
    expect((await api('POST', inputs, { answer: { title: 'again' } })).status).toBe(409);
    await settled(renamed.id);
    expect(effects('rename_note')).toEqual([{ title: 'plan', to: 'roadmap' }]);

    // In flight: the run executes while the server waits; baton answer --url sends the answer.
    const published = (await api('POST', '/v1/runs', { input: 'publish_note' })).body;
    const asked = async (id: string) => {
      await waitUntil(async () => (await api('GET', `/v1/runs/${id}`)).body.pending_input !== null, 'the question');
      return (await api('GET', `/v1/runs/${id}`)).body;
    };
    const open = await asked(published.id);
    expect(open).toMatchObject({ status: 'executing', pending_input: { from: { in_flight: true } } });
    const answered = await baton(['answer', published.id, '--value', '{"audience":"team"}', '--url', server.url]);
    expect(answered.code).toBe(0);
    await settled(published.id);

    // The same from another process on the database file: the serving process hears it.
    const again = (await api('POST', '/v1/runs', { input: 'publish_note' })).body;
    await asked(again.id);
    const local = await baton(['answer', again.id, '--value', '{"audience":"public"}', '--db', db, ...agent], {
      timeoutMs: scaled(60_000),
    });
    expect(local.code, local.stderr).toBe(0);
    await settled(again.id);
    expect(effects('publish_note')).toEqual([
      { title: 'plan', audience: 'team' },
      { title: 'plan', audience: 'public' },
    ]);

    // Declined without naming the question: the run's only wait; the server hears decline.
    const declined = (await api('POST', '/v1/runs', { input: 'publish_note' })).body;
    await asked(declined.id);
    const rejected = await baton(['reject', declined.id, '--reason', 'not now', '--url', server.url]);
    expect(rejected.code, rejected.stderr).toBe(0);
    await settled(declined.id);
    const answers = readJournal(journal).filter((e) => e.kind === 'answer' && e.tool === 'publish_note');
    expect(answers.map((e) => e.args.action)).toEqual(['accept', 'accept', 'decline']);
    expect(effects('publish_note')).toHaveLength(2);
  });

  it('baton run asks the question a call asks in flight on its stdin, and the server gets the answer', async () => {
    const dir = tempDir();
    const journal = join(dir, 'journal.jsonl');
    const args = ['run', 'publish_note', '--agent', 'test/cli/fixtures/mcp-asking-module-agent.ts'];
    const outcome = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(OPENAI_|BATON_)/.test(name)));
      const child = execFile(
        process.execPath,
        cliArgs([...args, '--db', join(dir, 'baton.db')]),
        { cwd: REPO_ROOT, env: { ...env, MCP_JOURNAL: journal }, encoding: 'utf8', timeout: scaled(60_000) },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
      );
      child.stdin?.end('{"audience": "everyone"}\n{"audience": "team"}\n');
    });
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout).toMatch(/^Question: Who may read 'plan'\?/m);
    expect(outcome.stderr).toMatch(/does not fit the question's schema; try again/);
    expect(outcome.stdout).toMatch(/^Run run_\S+ succeeded$/m);
    const published = readJournal(journal).filter((e) => e.kind === 'effect' && e.tool === 'publish_note');
    expect(published.map((e) => e.args)).toEqual([{ title: 'plan', audience: 'team' }]);
  });
});
