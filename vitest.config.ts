import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "lib/**/*.test.ts", "functions/**/*.test.ts", "infra/**/*.test.ts"],
    // LanceDB is a native addon: separate processes keep one test file's writer from another's.
    pool: "forks",
    reporters: ["default", "./test/support/summary-reporter.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
