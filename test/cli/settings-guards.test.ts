/**
 * Issue 22: every source of a cleanup setting goes through the same guards (an older-than below
 * 7 days, a safety window below 1 hour need their acknowledgement), and one precedence holds:
 * command-line flag > LAKEWARDEN_* environment > the table's config > lakewarden config > defaults,
 * each override a warning (lib/maintenance/policy.ts). Before: `config set older_than=0s` was
 * accepted, a plain cleanup then ran at 0s, a flag lost silently to the stored value, and the CDK
 * accepted `olderThan=1h`.
 */
import { readdir, readFile, writeFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CleanupReport } from "../../lib/maintenance/cleanup-report.ts";
import { resolvePolicy } from "../../lib/maintenance/policy.ts";
import { ShortSettingError } from "../../lib/maintenance/errors.ts";
import { resolveSettings, settingsFromContext } from "../../infra/settings.ts";
import { buildLanceDataset, makeTempDir, removeDir, type LanceDataset } from "../support/lance-datasets.ts";
import { runLakewarden } from "./run-executable.ts";

let dir: string;
let dataset: LanceDataset;
let table: string;
const CONFIG = () => join(table, "_lakewarden", "config");

beforeAll(async () => {
  dir = await makeTempDir("lw-guards-");
  dataset = await buildLanceDataset({
    dbUri: dir,
    steps: [
      { op: "create", rows: 10 },
      { op: "append", rows: 5 },
      { op: "append", rows: 5 },
    ],
  });
  dataset.close();
  table = dataset.tableUri;
});
afterAll(async () => {
  await removeDir(dir);
});

/** A stored config written as an older lakewarden (or a hand) could have left it, past `config set`'s guard. */
async function storeByHand(config: Record<string, string>): Promise<void> {
  await mkdir(join(table, "_lakewarden"), { recursive: true });
  await writeFile(CONFIG(), `${JSON.stringify(config)}\n`);
}

const NO_ENV = { LAKEWARDEN_OLDER_THAN: "", LAKEWARDEN_SAFETY_WINDOW: "", LAKEWARDEN_ALLOW_SHORT_RETENTION: "", LAKEWARDEN_ALLOW_SHORT_SAFETY_WINDOW: "" };

describe("stored config (lakewarden config set)", () => {
  it("refuses older_than=0s and safety_window=0s without their acknowledgement, exit 2, writing nothing", async () => {
    const refused = await runLakewarden(["config", "set", table, "older_than=0s", "safety_window=0s"], NO_ENV);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      `lakewarden: file://${table}/_lakewarden/config: lakewarden config lakewarden.older_than = "0s" is below 7 days: ` +
        "a version removed while a query or a commit still reads it breaks that reader or writer; " +
        "add allow_short_retention=true to lakewarden config set if nothing runs longer than 0s\n",
    );
    await expect(readFile(CONFIG())).rejects.toThrow(/ENOENT/);

    const windowOnly = await runLakewarden(["config", "set", table, "older_than=0s", "allow_short_retention=true", "safety_window=10m"], NO_ENV);
    expect(windowOnly.code).toBe(2);
    expect(windowOnly.stderr).toMatch(
      /lakewarden config lakewarden\.safety_window = "10m" is below 1 hour: .*add allow_short_safety_window=true to lakewarden config set only when/,
    );

    const acknowledged = await runLakewarden(["config", "set", table, "older_than=0s", "allow_short_retention=true", "--json"], NO_ENV);
    expect(acknowledged.code, acknowledged.stderr).toBe(0);
    // Removing the acknowledgement alone would leave a refused setting behind: refused too.
    const unset = await runLakewarden(["config", "unset", table, "allow_short_retention"], NO_ENV);
    expect(unset.code).toBe(2);
    expect(JSON.parse(await readFile(CONFIG(), "utf8"))).toEqual({ "lakewarden.allow_short_retention": "true", "lakewarden.older_than": "0s" });
    expect((await runLakewarden(["config", "unset", table, "older_than", "allow_short_retention"], NO_ENV)).code).toBe(0);
  });

  it("a stored 0s without acknowledgement (written by hand) stops a plain cleanup before any delete; the lease stays free", async () => {
    await storeByHand({ "lakewarden.older_than": "0s", "lakewarden.safety_window": "0s" });
    const before = await readdir(join(table, "_versions"));
    const run = await runLakewarden(["cleanup", table], NO_ENV);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^lakewarden: .*lakewarden config lakewarden\.older_than = "0s" is below 7 days: .*add allow_short_retention=true to lakewarden config set/);
    expect(await readdir(join(table, "_versions"))).toEqual(before);
    const lease = await runLakewarden(["lease", "show", table], NO_ENV);
    expect(lease.stdout).not.toMatch(/^held/);
    // config show still shows it, so it can be fixed.
    const shown = await runLakewarden(["config", "show", table], NO_ENV);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/lakewarden\.older_than +0s +lakewarden config/);
  });

  it("an explicit --older-than 30d beats the stored 0s, and says so", async () => {
    await storeByHand({ "lakewarden.older_than": "0s", "lakewarden.allow_short_retention": "true" });
    const run = await runLakewarden(["cleanup", table, "--older-than", "30d", "--dry-run", "--json"], NO_ENV);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as CleanupReport & { policy: Record<string, { value: unknown; source: string }> };
    expect(report.policy.older_than).toEqual({ value: "30d", source: "option" });
    expect(report.versions_removed).toEqual([]);
    expect(run.stderr).toContain('lakewarden: warning: --older-than 30d overrides lakewarden config lakewarden.older_than = "0s"\n');
  });
});

describe("environment (LAKEWARDEN_*)", () => {
  it("LAKEWARDEN_OLDER_THAN=1h is refused without LAKEWARDEN_ALLOW_SHORT_RETENTION=true, used with it, and overrides the stored config with a warning", async () => {
    await storeByHand({ "lakewarden.older_than": "30d" });
    const refused = await runLakewarden(["cleanup", table, "--dry-run"], { ...NO_ENV, LAKEWARDEN_OLDER_THAN: "1h" });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/LAKEWARDEN_OLDER_THAN=1h is below 7 days: .*set LAKEWARDEN_ALLOW_SHORT_RETENTION=true if nothing runs longer than 1h\n$/);

    const env = { ...NO_ENV, LAKEWARDEN_OLDER_THAN: "1h", LAKEWARDEN_ALLOW_SHORT_RETENTION: "true" };
    const run = await runLakewarden(["cleanup", table, "--dry-run", "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { policy: Record<string, { value: unknown; source: string }> };
    expect(report.policy.older_than).toEqual({ value: "1h", source: "environment LAKEWARDEN_OLDER_THAN" });
    expect(run.stderr).toContain('lakewarden: warning: LAKEWARDEN_OLDER_THAN=1h overrides lakewarden config lakewarden.older_than = "30d"\n');

    // A flag beats the environment, and says so.
    const flagged = await runLakewarden(["cleanup", table, "--older-than", "8d", "--dry-run", "--json"], env);
    expect((JSON.parse(flagged.stdout) as { policy: Record<string, { value: unknown }> }).policy.older_than!.value).toBe("8d");
    expect(flagged.stderr).toContain("lakewarden: warning: --older-than 8d overrides LAKEWARDEN_OLDER_THAN=1h\n");
  });

  it("an acknowledgement from a lower source does not cover a short value from a higher one", () => {
    const stored = { "lakewarden.allow_short_retention": "true" };
    expect(() => resolvePolicy({}, {}, "file:///t", stored, undefined, { environment: { olderThanMs: 3_600_000 } })).toThrow(ShortSettingError);
    expect(resolvePolicy({}, {}, "file:///t", stored, undefined, { environment: { olderThanMs: 3_600_000, allowShortRetention: true } }).olderThanMs).toBe(3_600_000);
    // The table's own config is a source like the others.
    expect(() => resolvePolicy({}, { "lakewarden.safety_window": "0s" }, "file:///t")).toThrow(/table config lakewarden\.safety_window = "0s" is below 1 hour/);
  });
});

describe("CDK settings", () => {
  const base = { tables: ["lake/t.lance"] };
  it("olderThan below 7 days needs allowShortRetention, like every other source", () => {
    expect(() => resolveSettings({ ...base, retention: { olderThan: "1h" } })).toThrow(
      'lakewarden setting olderThan: "1h" is below 7 days: a version removed while a query or a commit still reads it breaks that reader or writer; set lakewarden:allowShortRetention to true if nothing runs longer than 1h',
    );
    const context: Record<string, unknown> = { "lakewarden:tables": "lake/t.lance", "lakewarden:olderThan": "1h" };
    expect(() => settingsFromContext((key) => context[key])).toThrow(/olderThan: "1h" is below 7 days/);
    context["lakewarden:allowShortRetention"] = "true";
    expect(settingsFromContext((key) => context[key]).retention).toEqual({ olderThan: "1h", allowShortRetention: true });
  });
});
