/**
 * The demo's scripted planner: list the configs, read the ones not modified for a while,
 * propose archiving those whose `updated_at` is stale too, then report what happened (and which
 * files a person dropped from the list before approving).
 */
import { createScriptedPlanner, type Decision, type PlannerRequest } from '../index.js';
import { isStale, STALE_AFTER_DAYS } from './demo-configs.js';

interface Entry {
  name: string;
  type: string;
  mtime: string;
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The content of the last observation of a tool, if any. */
function lastObservation(request: PlannerRequest, tool: string): string | undefined {
  return request.messages.findLast((m) => m.role === 'tool' && m.tool === tool)?.content;
}

/** The `.json` files of the last listing, or the listing's error text. */
function listedConfigs(request: PlannerRequest): Entry[] | string {
  const text = lastObservation(request, 'fs.list');
  const listing = parseJson(text) as { entries?: Entry[] } | undefined;
  if (!Array.isArray(listing?.entries)) return text ?? 'no listing';
  return listing.entries.filter((e) => e.type === 'file' && e.name.endsWith('.json'));
}

function final(answer: string): Decision {
  return { type: 'final', answer };
}

function names(files: readonly string[]): string {
  return files.join(', ');
}

/** Step 1: read every config whose modification time is past the cut-off. */
function readCandidates(request: PlannerRequest): Decision {
  const configs = listedConfigs(request);
  if (typeof configs === 'string') return final(`I could not list the config directory: ${configs}`);
  const candidates = configs.filter((e) => isStale(Date.parse(e.mtime), Date.now()));
  if (candidates.length === 0) {
    return final(
      `None of the ${configs.length} config files is older than ${STALE_AFTER_DAYS} days; nothing to archive.`,
    );
  }
  return {
    type: 'tool_calls',
    text: `${candidates.length} of ${configs.length} configs were not modified for ${STALE_AFTER_DAYS} days; reading them.`,
    calls: candidates.map((e) => ({ tool: 'fs.read', args: { path: e.name } })),
  };
}

/** The configs read in step 1 whose `updated_at` is stale as well: what step 2 proposes to archive. */
function staleConfigs(request: PlannerRequest): string[] {
  const stale: string[] = [];
  for (const message of request.messages) {
    if (message.role !== 'tool' || message.tool !== 'fs.read') continue;
    const read = parseJson(message.content) as { path?: string; content?: string } | undefined;
    const config = parseJson(read?.content) as { updated_at?: unknown } | undefined;
    const updatedAt = typeof config?.updated_at === 'string' ? Date.parse(config.updated_at) : NaN;
    if (read?.path && isStale(updatedAt, Date.now())) stale.push(read.path);
  }
  return stale;
}

/** Step 2: propose archiving the candidates whose `updated_at` is stale as well. */
function proposeArchive(request: PlannerRequest): Decision {
  const stale = staleConfigs(request);
  if (stale.length === 0)
    return final(`No config has an 'updated_at' older than ${STALE_AFTER_DAYS} days; nothing to archive.`);
  return {
    type: 'tool_calls',
    text: `Archiving ${stale.length} stale configs: ${names(stale)}.`,
    calls: [{ tool: 'configs.archive', args: { files: stale } }],
  };
}

/**
 * What a person did to the archive call, as its observation's first line says (who edited the
 * list before approving, or who gave the result instead of running it), and the result after it.
 */
function splitNote(text: string): { editedBy: string | null; respondedBy: string | null; body: string } {
  const [first = '', ...rest] = text.split('\n');
  const edited = / edited the arguments before approving(?: \(.*\))?; the call ran with /.exec(first);
  if (rest.length > 0 && edited)
    return { editedBy: first.slice(0, edited.index), respondedBy: null, body: rest.join('\n') };
  const responded = /^Not run: (.*) gave this result for /.exec(first);
  if (rest.length > 0 && responded) return { editedBy: null, respondedBy: responded[1]!, body: rest.join('\n') };
  return { editedBy: null, respondedBy: null, body: text };
}

/** Step 3: report the archive call's outcome: a rejection, the files a person dropped from the list. */
function report(request: PlannerRequest): Decision {
  const observed = lastObservation(request, 'configs.archive') ?? 'Error: the archive call has no result';
  const { editedBy, respondedBy, body: text } = splitNote(observed);
  if (text.startsWith('Error policy.denied')) {
    const why = text.split('\n')[0]!.replace(/^Error policy\.denied: /, '');
    return final(`Nothing was archived: the request to archive the stale configs was rejected (${why}).`);
  }
  if (text.startsWith('Error')) return final(`Nothing was archived: ${text.split('\n')[0]}`);
  const result = parseJson(text) as { archived?: string[]; missing?: string[] } | undefined;
  const archived = result?.archived ?? [];
  const missing = result?.missing ?? [];
  const stale = staleConfigs(request);
  const dropped = stale.filter((name) => !archived.includes(name) && !missing.includes(name));
  const configs = listedConfigs(request);
  const fresh = typeof configs === 'string' ? 0 : configs.length - Math.max(stale.length, archived.length);
  return final(
    [
      archived.length > 0
        ? `Archived ${archived.length} stale configs into archive/: ${names(archived)}.`
        : 'Nothing was archived.',
      respondedBy ? `(As ${respondedBy} reported; the archive tool did not run.)` : '',
      editedBy && dropped.length > 0
        ? `Kept in place because ${editedBy} dropped them from the list before approving: ${names(dropped)}.`
        : '',
      missing.length > 0 ? `Not found: ${names(missing)}.` : '',
      `${fresh} configs updated within ${STALE_AFTER_DAYS} days were left in place.`,
    ]
      .filter(Boolean)
      .join(' '),
  );
}

/** Creates the demo's planner: one scripted decision (or function of the context) per step. */
export function createDemoPlanner() {
  return createScriptedPlanner([
    {
      type: 'tool_calls',
      text: 'Listing the config directory.',
      calls: [{ tool: 'fs.list', args: { path: '.' } }],
    },
    readCandidates,
    proposeArchive,
    report,
  ]);
}
