import { defineConfig } from "vitest/config";

// The peer comparisons (test/peers/): Spark's JVM, delta-rs, pylance and Iceberg Java on the same
// tables as lakewarden. Slow and heavy, so not in `npm test`: `npm run test:peers`, one file at a time.
export default defineConfig({
  test: {
    include: ["test/peers/**/*.peers.ts"],
    pool: "forks",
    fileParallelism: false,
    testTimeout: 1_560_000,
    hookTimeout: 1_860_000,
  },
});
