/**
 * The house's structure as its imports say it is: which file imports which (relative imports of
 * `machines/` and `src/`, type-only ones too), the longest functions, and the layers these are
 * held to (docs/architecture.md). `test/architecture/house.test.ts` checks the rules; running this
 * file prints the same figures: `npx tsx test/helpers/house.ts`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The top-level parts of the code, lowest first: a part imports only parts before it (or itself). */
export const PARTS = [
  'src/defaults.ts',
  'src/failure.ts',
  'machines/',
  'src/store/',
  'src/tools/',
  'src/planner/',
  'src/policy/',
  'src/runtime/',
  'src/agent/',
  'src/embed/',
  'src/testing/',
  'src/index.ts',
  'src/demo/',
  'src/server/',
  'src/cli/',
] as const;

/** The runtime's folders, lowest first; the root files (the façade) stand above them all. */
export const RUNTIME_FOLDERS = [
  'model',
  'observe',
  'drive',
  'ledger',
  'steps',
  'registry',
  'sharing',
  'read',
  'retention',
] as const;

/** The longest a function of `src/` may be, in lines from its first line to its closing brace. */
export const MAX_FUNCTION_LINES = 150;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every source file of `machines/` and `src/`, relative to the root. */
export function codeFiles(): string[] {
  return [...sourceFiles('machines'), ...sourceFiles('src')].sort();
}

/** The files a file imports (relative imports only, as root-relative `.ts` paths). */
export function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
  return info.importedFiles
    .map((ref) => ref.fileName)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => relative(ROOT, resolve(ROOT, dirname(file), spec)).replace(/\.js$/, '.ts'));
}

/** Which part of `PARTS` a file is in. */
export function partOf(file: string): string {
  const part = PARTS.find((p) => (p.endsWith('/') ? file.startsWith(p) : file === p));
  if (!part) throw new Error(`${file} is in no part of the house`);
  return part;
}

/** The runtime folder of a file of `src/runtime/` (its rank: the root files rank above every folder). */
export function runtimeRank(file: string): { folder: string; rank: number } {
  const rest = file.slice('src/runtime/'.length);
  const folder = rest.includes('/') ? rest.slice(0, rest.indexOf('/')) : '(root)';
  const rank = folder === '(root)' ? RUNTIME_FOLDERS.length : RUNTIME_FOLDERS.indexOf(folder as never);
  if (rank < 0) throw new Error(`${file} is in no runtime folder`);
  return { folder, rank };
}

export interface Edge {
  from: string;
  to: string;
}

/** Imports that run back up: from a lower part to a higher one, or between the runtime's folders. */
export function upwardImports(): { parts: Edge[]; runtime: Edge[] } {
  const parts: Edge[] = [];
  const runtime: Edge[] = [];
  for (const from of codeFiles()) {
    for (const to of importsOf(from)) {
      if (PARTS.indexOf(partOf(to) as never) > PARTS.indexOf(partOf(from) as never)) parts.push({ from, to });
      if (from.startsWith('src/runtime/') && to.startsWith('src/runtime/')) {
        if (runtimeRank(to).rank > runtimeRank(from).rank) runtime.push({ from, to });
      }
    }
  }
  return { parts, runtime };
}

/** Files that import each other in a loop (each loop once, as the files on it). */
export function importCycles(): string[][] {
  const graph = new Map(codeFiles().map((file) => [file, importsOf(file)]));
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') cycles.push(stack.slice(stack.indexOf(next)));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return cycles;
}

export interface FunctionLength {
  file: string;
  name: string;
  line: number;
  lines: number;
}

/** Every function of `machines/` and `src/` (declarations, expressions, arrows, methods) with its length. */
export function functionLengths(): FunctionLength[] {
  const found: FunctionLength[] = [];
  for (const file of codeFiles()) {
    const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (
        ts.isFunctionDeclaration(node) ||
        ts.isFunctionExpression(node) ||
        ts.isArrowFunction(node) ||
        ts.isMethodDeclaration(node)
      ) {
        const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
        const parent = node.parent;
        const name =
          node.name?.getText(source) ??
          (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)
            ? parent.name.getText(source)
            : '(anonymous)');
        found.push({ file, name, line: first, lines: last - first + 1 });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found.sort((a, b) => b.lines - a.lines);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const files = codeFiles();
  const runtimeFiles = files.filter((f) => f.startsWith('src/runtime/'));
  const perFolder = new Map<string, { files: number; lines: number }>();
  for (const file of runtimeFiles) {
    const { folder } = runtimeRank(file);
    const entry = perFolder.get(folder) ?? { files: 0, lines: 0 };
    entry.files += 1;
    entry.lines += readFileSync(join(ROOT, file), 'utf8').split('\n').length - 1;
    perFolder.set(folder, entry);
  }
  console.log('src/runtime/ folders, lowest first (files, lines):');
  for (const folder of [...RUNTIME_FOLDERS, '(root)']) {
    const entry = perFolder.get(folder);
    if (entry)
      console.log(`  ${folder.padEnd(10)} ${String(entry.files).padStart(3)} ${String(entry.lines).padStart(6)}`);
  }
  const up = upwardImports();
  console.log(
    `imports that run back up: ${up.parts.length} between parts, ${up.runtime.length} between runtime folders`,
  );
  for (const edge of [...up.parts, ...up.runtime]) console.log(`  ${edge.from} -> ${edge.to}`);
  const cycles = importCycles();
  console.log(`import cycles: ${cycles.length}`);
  for (const cycle of cycles) console.log(`  ${cycle.join(' -> ')}`);
  console.log('longest functions:');
  for (const f of functionLengths().slice(0, 8))
    console.log(`  ${String(f.lines).padStart(4)}  ${f.file}:${f.line} ${f.name}`);
}
