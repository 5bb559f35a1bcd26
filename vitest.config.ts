import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "lib/**/*.test.ts", "functions/**/*.test.ts", "infra/**/*.test.ts"],
    // LanceDB is a native addon: separate processes keep one test file's writer from another's.
    pool: "forks",
    reporters: ["default", "./test/support/summary-reporter.ts"],
    testTimeout: 120_000,
    // Cleanup keeps a page of its listing and plan in memory and spills the rest (lib/maintenance/spill.ts):
    // pages of 7 make every test table span pages, so the suite runs the paged paths a million-file table takes.
    env: { LAKEWARDEN_SPILL_PAGE_ITEMS: "7" },
    hookTimeout: 120_000,
  },
});
