/** Files of JSON lines the tests' outside worlds and children append to. */
import { existsSync, readFileSync } from 'node:fs';

/** Every line of a JSON-lines file, parsed (none before the file exists). */
export function readJsonLines<T>(file: string): T[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as T);
}
