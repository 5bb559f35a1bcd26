/**
 * `versions --json` prints its records without running snakeCaseKeys over each one (a record's
 * own fields are snake_case already): the text must still be exactly what that rule gives,
 * format-named metrics included (Delta's `operationMetrics` are camelCase).
 */
import { describe, expect, it } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { readHistory } from "../../lib/head/timeline-source.ts";
import { snakeCaseKeys } from "../../lib/maintenance/cleanup-report.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { copyFixture } from "../support/fixtures.ts";

describe("versions --json", () => {
  it("prints what snakeCaseKeys gives, metrics keys converted, on a Delta table", async () => {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    const io = new BufferIO();
    expect(await runCli(["versions", dir, "--json"], io)).toBe(0);
    const { records } = await readHistory(openStore(dir));
    expect(records.some((r) => Object.keys(r.metrics).some((key) => /[A-Z]/.test(key)))).toBe(true);
    expect(io.stdout).toBe(`${JSON.stringify(snakeCaseKeys(records), null, 2)}\n`);
    expect(io.stdout).toContain('"num_output_rows"');
  });
});
