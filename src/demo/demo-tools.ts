/**
 * The demo's tools. They act inside the directory named by the run's `context.configDir`, chosen
 * by the caller and never by the model, and refuse any path that leaves it.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { z } from 'zod';
import { defineTool, ToolFailedError, type ToolContext } from '../index.js';

/** The folder, inside the config directory, that archived configs move to. */
export const ARCHIVE_DIR = 'archive';

function rootOf(ctx: ToolContext): string {
  const dir = ctx.context.configDir;
  if (typeof dir !== 'string' || dir === '') throw new ToolFailedError("The run's context has no 'configDir'");
  return resolve(dir);
}

function inside(root: string, path: string): string {
  const full = resolve(root, path);
  const rel = relative(root, full);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new ToolFailedError(`Path '${path}' is outside the config directory`);
  }
  return full;
}

/** `fs.list`: the entries of a folder of the config directory, with sizes and modification times. */
export const fsList = defineTool({
  name: 'fs.list',
  description: 'List the files of a folder of the config directory, with their size and modification time.',
  input: z.strictObject({ path: z.string().min(1).max(200).default('.') }),
  effect: 'read',
  risk: 'low',
  // File names and contents are anyone's to write: the run becomes untrusted once it reads them.
  trustedOutput: false,
  execute: ({ path }, ctx) => {
    const dir = inside(rootOf(ctx), path);
    const entries = readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isFile() || entry.isDirectory())
      .map((entry) => {
        const stat = statSync(join(dir, entry.name));
        return {
          name: entry.name,
          type: entry.isFile() ? ('file' as const) : ('dir' as const),
          size: stat.size,
          mtime: stat.mtime.toISOString(),
        };
      })
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    return { path, entries };
  },
});

/** `fs.read`: the text of one file of the config directory. */
export const fsRead = defineTool({
  name: 'fs.read',
  description: 'Read one file of the config directory as text.',
  input: z.strictObject({ path: z.string().min(1).max(200) }),
  effect: 'read',
  risk: 'low',
  // File names and contents are anyone's to write: the run becomes untrusted once it reads them.
  trustedOutput: false,
  execute: ({ path }, ctx) => ({ path, content: readFileSync(inside(rootOf(ctx), path), 'utf8') }),
});

/**
 * `configs.archive`: moves config files into `archive/`; the person approving may edit its list
 * of files first (drop one, say). Idempotent by construction: a file
 * already in `archive/` and gone from its place counts as archived, so running the call again
 * after a crash (with the same idempotency key) finishes the job and reports the same outcome.
 */
export const configsArchive = defineTool({
  name: 'configs.archive',
  description: `Move config files (top-level .json names) into the ${ARCHIVE_DIR}/ folder of the config directory.`,
  input: z.strictObject({
    files: z
      .array(z.string().regex(/^[^/\\]+\.json$/, 'a top-level .json file name'))
      .min(1)
      .max(100),
  }),
  effect: 'idempotent',
  risk: 'high',
  // The person approving may drop files from the list first (edit, then approve): the call runs
  // once, with the list they left, checked by the same input schema.
  allowEdit: true,
  execute: ({ files }, ctx) => {
    const root = rootOf(ctx);
    const archive = join(root, ARCHIVE_DIR);
    mkdirSync(archive, { recursive: true });
    const archived: string[] = [];
    const missing: string[] = [];
    for (const name of files) {
      const from = inside(root, name);
      const to = join(archive, name);
      if (existsSync(from)) renameSync(from, to);
      else if (!existsSync(to)) {
        missing.push(name);
        continue;
      }
      archived.push(name);
    }
    return { archived, missing, into: `${ARCHIVE_DIR}/` };
  },
  /**
   * Moves the files the call archived back where they were: what a cancel with compensation
   * undoes. Idempotent by construction too: a file already back (and gone from `archive/`)
   * counts as restored, so a compensation run again after a crash finishes the job.
   */
  compensate: (_input, output, ctx) => {
    const root = rootOf(ctx);
    const restored: string[] = [];
    for (const name of output.archived) {
      const from = join(root, ARCHIVE_DIR, name);
      const to = inside(root, name);
      if (existsSync(from) && !existsSync(to)) renameSync(from, to);
      if (existsSync(to)) restored.push(name);
    }
    return { restored };
  },
});

/** Every tool of the demo agent. */
export const DEMO_TOOLS = [fsList, fsRead, configsArchive];
