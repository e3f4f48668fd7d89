import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // In each test process, what `tally`'s commands set at start (src/cli/main.ts).
    setupFiles: ['test/support/process-knobs.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Every answer of every app and `tally serve` a test starts is checked against its
    // route's response schema (src/api/response-check.ts): a schema that lies fails a test.
    env: { TALLY_CHECK_RESPONSES: '1' },
  },
});
