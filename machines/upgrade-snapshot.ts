/**
 * Persisted snapshots of older machine versions, brought up to this one. Each step is pure and
 * only adds what the newer machine expects; saved fixtures of every version must keep restoring.
 */
import { MACHINE_VERSION } from './run-machine.js';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Version 1 → 2: cost accounting (`costUsd`, `limits.maxCostUsd`), in the context and in actor inputs. */
function v1ToV2(snapshot: Json): Json {
  const context = isObject(snapshot.context) ? snapshot.context : {};
  const limits = isObject(context.limits) ? context.limits : {};
  const children = isObject(snapshot.children) ? snapshot.children : {};
  const upgradedChildren = Object.fromEntries(
    Object.entries(children).map(([id, child]) => {
      if (!isObject(child) || !isObject(child.snapshot) || !isObject(child.snapshot.input)) return [id, child];
      const input = child.snapshot.input;
      const withLimits = isObject(input.limits) ? { ...input, limits: { maxCostUsd: null, ...input.limits } } : input;
      const withCost = 'tokens' in withLimits ? { costUsd: 0, ...withLimits } : withLimits;
      return [id, { ...child, snapshot: { ...child.snapshot, input: withCost } }];
    }),
  );
  return {
    ...snapshot,
    context: { costUsd: 0, ...context, limits: { maxCostUsd: null, ...limits } },
    children: upgradedChildren,
  };
}

const STEPS: Record<number, (snapshot: Json) => Json> = { 1: v1ToV2 };

/** Brings a persisted snapshot saved by `fromVersion` up to `MACHINE_VERSION`. */
export function upgradeSnapshot(snapshot: unknown, fromVersion: number): unknown {
  if (fromVersion > MACHINE_VERSION) {
    throw new Error(`Snapshot of machine version ${fromVersion} is newer than this machine (${MACHINE_VERSION})`);
  }
  let current = snapshot as Json;
  for (let version = fromVersion; version < MACHINE_VERSION; version += 1) {
    const step = STEPS[version];
    if (!step) throw new Error(`No upgrade from machine version ${version}`);
    current = step(current);
  }
  return current;
}
