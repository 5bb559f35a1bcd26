/**
 * A safety window shorter than a commit can take deletes a live writer's uncommitted files, so
 * below one hour it needs an explicit acknowledgement: on the command line and in the stack.
 */
import { afterAll, describe, expect, it } from "vitest";
import { InvalidSettingError, resolveSettings } from "../../infra/settings.ts";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

describe("--safety-window below 1 hour", () => {
  it("is refused with the reason unless --allow-short-safety-window is given", async () => {
    const dbUri = await makeTempDir("lw-safety-");
    dirs.push(dbUri);
    const ds = await buildLanceDataset({
      dbUri,
      steps: [
        { op: "create", rows: 4 },
        { op: "append", rows: 2 },
      ],
    });
    ds.close();
    const refused = await cli("cleanup", ds.tableUri, "--safety-window", "0s", "--dry-run");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--safety-window 0s is below 1 hour: an unreferenced file that young may belong to a commit still being written/);
    expect(refused.stderr).toMatch(/--allow-short-safety-window/);
    const allowed = await cli("cleanup", ds.tableUri, "--safety-window", "0s", "--allow-short-safety-window", "--dry-run", "--json");
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(JSON.parse(allowed.stdout).policy.safety_window).toEqual({ value: "0s", source: "option" });
    expect((await cli("cleanup", ds.tableUri, "--safety-window", "1h", "--dry-run")).code).toBe(0);
  });

  it("in the stack: lakewarden:safetyWindow below 1 hour needs lakewarden:allowShortSafetyWindow", () => {
    const base = { tables: ["lake/t.lance"] };
    expect(() => resolveSettings({ ...base, retention: { safetyWindow: "10m" } })).toThrow(InvalidSettingError);
    expect(() => resolveSettings({ ...base, retention: { safetyWindow: "10m" } })).toThrow(/below 1 hour/);
    expect(resolveSettings({ ...base, retention: { safetyWindow: "10m", allowShortSafetyWindow: true } }).retention.safetyWindow).toBe("10m");
  });
});
