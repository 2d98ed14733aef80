/**
 * The layers of docs/architecture.md, held against the code's own imports: the parts of the
 * project and the runtime's folders import only what stands below them, no files import each
 * other in a loop, and no function of the code runs over 150 lines.
 */
import { describe, expect, it } from 'vitest';
import {
  codeFiles,
  functionLengths,
  importCycles,
  importsOf,
  MAX_FUNCTION_LINES,
  RUNTIME_FOLDERS,
  runtimeRank,
  upwardImports,
} from '../helpers/house.js';

describe('the house', () => {
  it("reads the imports it checks (the runtime's root files import the registry and the steps)", () => {
    const root = codeFiles().filter((file) => /^src\/runtime\/[^/]+$/.test(file));
    expect(root).toContain('src/runtime/runtime.ts');
    const imports = root.flatMap(importsOf);
    expect(imports.some((file) => file.startsWith('src/runtime/registry/'))).toBe(true);
    expect(imports.some((file) => file.startsWith('src/runtime/steps/'))).toBe(true);
    expect(codeFiles().length).toBeGreaterThan(100);
  });

  it('has every file of src/runtime/ in a folder of the layer list or at its root', () => {
    const strays = codeFiles()
      .filter((file) => file.startsWith('src/runtime/'))
      .filter((file) => {
        try {
          runtimeRank(file);
          return false;
        } catch {
          return true;
        }
      });
    expect(strays).toEqual([]);
    expect(RUNTIME_FOLDERS.length).toBe(9);
  });

  it('imports only downward: between the parts of the project and between the runtime folders', () => {
    const { parts, runtime } = upwardImports();
    expect(parts.map((edge) => `${edge.from} -> ${edge.to}`)).toEqual([]);
    expect(runtime.map((edge) => `${edge.from} -> ${edge.to}`)).toEqual([]);
  });

  it('has no files that import each other in a loop', () => {
    expect(importCycles().map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    const lengths = functionLengths();
    expect(lengths.length).toBeGreaterThan(500);
    const long = lengths
      .filter((f) => f.lines > MAX_FUNCTION_LINES)
      .map((f) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`);
    expect(long).toEqual([]);
  });
});
