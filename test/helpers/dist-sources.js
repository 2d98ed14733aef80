/**
 * Preloaded (`node --import tsx --import <this file>`) when the built CLI (dist/) loads a test's
 * TypeScript agent module: the module and the test helpers it imports name Baton by its sources
 * (`../../src/index.js`), which this maps to the built files, so the agent's tools, errors and
 * schemas are the very modules the CLI runs with, not a second copy compiled from src/.
 */
import { register } from 'node:module';

register('./dist-sources-hooks.js', import.meta.url);
