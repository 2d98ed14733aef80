import { defineConfig } from 'vitest/config';
import { scaled, SLOWDOWN } from './test/helpers/limits.js';

// Decided once, here: the workers inherit it, so every file of a run scales its limits alike.
process.env.BATON_TEST_SLOWDOWN = String(SLOWDOWN);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The CLI's child processes run the build in dist/: rebuilt first when the sources changed.
    globalSetup: ['test/helpers/build-dist.ts'],
    // Upper bounds, not waits: tests wait on conditions. Child processes and a browser on a busy
    // shared runner can take a while, which must make the suite slow, not red (see limits.ts).
    testTimeout: scaled(90_000),
    hookTimeout: scaled(90_000),
    // expect.poll's limit when a test names none (vitest's own is 1 s).
    expect: { poll: { timeout: scaled(30_000) } },
    pool: 'forks',
    // Most tests wait on child processes, a browser or disk rather than the CPU: three files at
    // once on two cores keeps the suite short, and every wait is on a condition, so a busy
    // machine makes it slower, not red.
    maxWorkers: 3,
  },
});
