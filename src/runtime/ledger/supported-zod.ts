/**
 * zod is a peer dependency: Baton reads the application's own schemas with the application's
 * own zod, so there is one copy of it. A package manager that only warns about an unmet peer
 * (or `npm install --legacy-peer-deps`) can still leave zod 3 or 4.0–4.1 installed, whose missing
 * JSON Schema conversions would surface as a TypeError deep inside the first tool's conversion;
 * `createRuntime` says so first, naming the version it found and the range it needs.
 */
import { z } from 'zod';
import { fail } from '../../failure.js';

/** The zod versions Baton works with: package.json's `peerDependencies.zod`. */
export const ZOD_PEER_RANGE = '^4.2.0';

/** The version of the zod Baton loaded, as zod 4 reports it (zod 3 does not say). */
function loadedVersion(): string {
  const version = (z as { core?: { version?: { major: number; minor: number; patch: number } } }).core?.version;
  return version ? `${version.major}.${version.minor}.${version.patch}` : '3 or older';
}

/** Throws `dependency.unsupported` unless the zod Baton loaded has the conversions Baton uses. */
export function assertSupportedZod(): void {
  // Feature tests rather than a version compare: these two are what Baton calls (a tool's input
  // as the model's JSON Schema, an MCP server's JSON Schema as a zod input, the latter new in 4.2).
  const zod = z as { toJSONSchema?: unknown; fromJSONSchema?: unknown };
  if (typeof zod.toJSONSchema === 'function' && typeof zod.fromJSONSchema === 'function') return;
  const found = loadedVersion();
  fail(
    'dependency.unsupported',
    `Baton needs zod ${ZOD_PEER_RANGE} (a peer dependency: it uses the application's zod), but the zod installed is ${found}`,
    { details: { dependency: 'zod', found, range: ZOD_PEER_RANGE } },
  );
}
