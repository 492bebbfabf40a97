import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // End-to-end tests start real processes and fsync real files: give them room on a shared machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // dist/ built from today's src/ (the end-to-end tests run dist/cli/main.js). One real
    // PostgreSQL server for the run; each test makes its own databases on it. And the run fails if
    // it changed docs/ (the README's screenshots are retaken by `npm run screenshots`).
    globalSetup: ['test/support/global-build.ts', 'test/support/global-postgres.ts', 'test/support/global-docs-untouched.ts'],
  },
});
