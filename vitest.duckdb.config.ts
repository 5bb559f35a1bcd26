import { defineConfig } from "vitest/config";

// DuckDB as an oracle of plans and rows (test/scan/*.duckdb.ts): 1,040 randomized filters on tables
// the writers make, about 50 s, so not in `npm test`: `npm run test:duckdb`.
export default defineConfig({
  test: {
    include: ["test/scan/**/*.duckdb.ts"],
    pool: "forks",
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
