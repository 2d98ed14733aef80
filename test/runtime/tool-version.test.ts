/**
 * A deploy between a decision and its call: the run resumes in a runtime whose tool has another
 * version. The new code never runs an old decision by itself: a human chooses the new version
 * or rejects the call, unless the tool declares the old version compatible.
 */
import { appendFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createScriptedPlanner, defineTool, type RuntimeOptions } from '../../src/index.js';
import { eventsOf, openRuntime, restart } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';
import { readJsonLines } from '../helpers/json-lines.js';

function setup(db: string, effects: string, version: string, compatibleVersions?: string[]): RuntimeOptions {
  const archive = defineTool({
    name: 'fs.archive',
    version,
    ...(compatibleVersions ? { compatibleVersions } : {}),
    description: 'Archives files (high risk: a human approves)',
    input: z.object({ path: z.string() }),
    effect: 'unsafe',
    risk: 'high',
    execute: ({ path }) => {
      appendFileSync(effects, JSON.stringify({ path, version }) + '\n');
      return { archived: path, version };
    },
  });
  return {
    database: db,
    planner: createScriptedPlanner((request) =>
      request.stepIndex === 0
        ? { type: 'tool_calls', calls: [{ tool: 'fs.archive', args: { path: '/old' } }] }
        : { type: 'final', answer: `saw: ${request.messages.at(-1)!.content}` },
    ),
    tools: [archive],
  };
}

/** A run that waits for the approval of a call decided with version 1, then a deploy of `version`. */
async function decidedThenDeployed(version: string, compatibleVersions?: string[]) {
  const { db, effects } = tempFiles();
  const before = openRuntime(setup(db, effects, '1'));
  const run = await before.wait((await before.start({ input: 'archive /old' })).id);
  expect(run.status).toBe('waiting_human');
  const runtime = await restart(before, setup(db, effects, version, compatibleVersions));
  await runtime.approve(run.id, run.pendingApprovalId!, { by: 'alice' });
  return { runtime, run, effects };
}

describe('tool versions', () => {
  it('asks a human before a new version runs a call decided with the old one, and runs it once approved', async () => {
    const { runtime, run, effects } = await decidedThenDeployed('2');
    const waiting = await runtime.wait(run.id);
    expect(waiting).toMatchObject({ status: 'waiting_human', waitReason: 'tool_version_mismatch' });
    expect(readJsonLines(effects)).toEqual([]);
    const approval = (await runtime.approvals(run.id)).find((a) => a.id === waiting.pendingApprovalId)!;
    expect(approval).toMatchObject({ kind: 'version', status: 'pending', toolCallIds: [`${run.id}.s0.c0`] });
    const request = (await eventsOf(runtime, run.id)).findLast((e) => e.type === 'approval_request');
    expect(request?.data).toMatchObject({
      reason: 'tool_version_mismatch',
      tool_calls: [{ tool: 'fs.archive', recorded_version: '1', version: '2' }],
      failure: { code: 'tool.version_mismatch' },
    });
    await runtime.approve(run.id, approval.id, { by: 'alice', reason: 'v2 is fine' });
    expect(await runtime.wait(run.id)).toMatchObject({ status: 'succeeded' });
    expect(readJsonLines(effects)).toEqual([{ path: '/old', version: '2' }]);
    expect((await runtime.toolCalls(run.id))[0]).toMatchObject({ status: 'succeeded', toolVersion: '2' });
  });

  it('tells the model when a human rejects the new version, and the call never runs', async () => {
    const { runtime, run, effects } = await decidedThenDeployed('2');
    const waiting = await runtime.wait(run.id);
    await runtime.reject(run.id, waiting.pendingApprovalId!, { by: 'alice', reason: 'not with v2' });
    const done = await runtime.wait(run.id);
    expect(done.status).toBe('succeeded');
    expect(done.answer).toContain('not with v2');
    expect(readJsonLines(effects)).toEqual([]);
    expect((await runtime.toolCalls(run.id))[0]).toMatchObject({
      status: 'rejected',
      result: { failure: { code: 'tool.version_mismatch' } },
    });
  });

  it('runs the call at once when the new version declares the old one compatible', async () => {
    const { runtime, run, effects } = await decidedThenDeployed('2', ['1']);
    expect(await runtime.wait(run.id)).toMatchObject({ status: 'succeeded' });
    expect(readJsonLines(effects)).toEqual([{ path: '/old', version: '2' }]);
  });
});
