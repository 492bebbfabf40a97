// The tests' PostgreSQL servers come from the package's own test helper (prequal-hooks/testing).
export { createDatabase, findBinaries, startTestPostgres as startPostgres, type PostgresServer } from '../../src/testing/postgres.js';
