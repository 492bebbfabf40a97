import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Three projects, by what a test needs before it starts (CONTRIBUTING.md, "The test suite"):
//   unit         pure code in this process: no global setup, so `npm run test:unit` starts at once.
//   integration  real SQLite files, a real PostgreSQL, loopback servers; a few spawn a script that
//                imports the built package (test/support/*.mjs), so dist/ is built when stale.
//   e2e          the built `prequal-hooks` process and the package as users import it.
// The property tests that run against both engines need the PostgreSQL server: integration.
const PROPERTIES_ON_BOTH_ENGINES = [
  'test/property/accounts.property.test.ts',
  'test/property/changes.property.test.ts',
  'test/property/counters.property.test.ts',
  'test/property/erasure.property.test.ts',
  'test/property/projection.property.test.ts',
];

// dist/ built from today's src/ (a stat of each source when current).
const BUILD = 'test/support/global-build.ts';
// One real PostgreSQL server for the run, shared by the projects that list it; each test makes its
// own databases on it.
const POSTGRES = 'test/support/global-postgres.ts';
// The run fails if it changed docs/ (the README's screenshots are retaken by `npm run screenshots`).
const DOCS_UNTOUCHED = 'test/support/global-docs-untouched.ts';

export default defineConfig({
  test: {
    // End-to-end tests start real processes and fsync real files: give them room on a shared machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One test file a core (vitest's default leaves one core to itself: on 2 cores, one file at a
    // time). The files spend most of their time waiting on the processes and servers they start.
    maxWorkers: availableParallelism(),
    // A test that asserts nothing fails: it would pass whatever the code did.
    expect: { requireAssertions: true },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/property/**/*.test.ts'],
          exclude: PROPERTIES_ON_BOTH_ENGINES,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', ...PROPERTIES_ON_BOTH_ENGINES],
          globalSetup: [BUILD, POSTGRES],
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts', 'test/examples/**/*.test.ts'],
          globalSetup: [BUILD, POSTGRES, DOCS_UNTOUCHED],
        },
      },
    ],
  },
});
