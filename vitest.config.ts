import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most tests wait on child processes, a browser or disk rather than the CPU: three files at
    // once on two cores keeps the suite short, and every wait is on a condition, so a busy
    // machine makes it slower, not red.
    maxWorkers: 3,
  },
});
