/**
 * A table's format is detected once (every registered format looks, one LIST each), pinned in
 * `_lakewarden/format` by maintenance, and a location that looks like two formats at once is
 * an error naming both unless the caller says which.
 */
import { cp, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { AmbiguousFormatError, NotATableError } from "../../lib/formats/errors.ts";
import { detectFormat, findFormat, formatByName } from "../../lib/formats/index.ts";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { FORMAT_PIN_KEY } from "../../lib/model/layout.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { fixturePath } from "../support/iceberg-fixtures.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

async function lanceTable(): Promise<string> {
  const dbUri = await makeTempDir("lw-detect-");
  dirs.push(dbUri);
  const ds = await buildLanceDataset({
    dbUri,
    steps: [
      { op: "create", rows: 3 },
      { op: "append", rows: 2 },
    ],
  });
  ds.close();
  return ds.tableUri;
}

describe("format detection", () => {
  it("finds the one format, and maintenance pins it; later commands read the pin", async () => {
    const tableUri = await lanceTable();
    const store = new LocalStore(tableUri);
    expect((await findFormat(store)).source).toBe("detected");
    const io = new BufferIO();
    expect(await runCli(["head", "write", tableUri], io), io.stderr).toBe(0);
    expect((await readFile(join(tableUri, FORMAT_PIN_KEY), "utf8")).trim()).toBe("lance");
    expect(await findFormat(store)).toMatchObject({ format: formatByName("lance"), source: "pinned" });
  });

  it("a location that looks like two formats at once is an error naming both, unless --format says which", async () => {
    const tableUri = await lanceTable();
    // An Iceberg table's metadata beside the Lance folders.
    await cp(join(fixturePath("spark-bunnies"), "metadata"), join(tableUri, "metadata"), { recursive: true });
    const store = new LocalStore(tableUri);
    await expect(detectFormat(store)).rejects.toThrow(AmbiguousFormatError);
    await expect(detectFormat(store)).rejects.toThrow(
      /looks like a lance table \(_versions\/\) and an iceberg table \(metadata\/\) at once; say which with --format lance\|iceberg/,
    );
    const refused = new BufferIO();
    expect(await runCli(["versions", tableUri], refused)).toBe(1);
    expect(refused.stderr).toMatch(/looks like a lance table .* and an iceberg table/);
    const chosen = new BufferIO();
    expect(await runCli(["versions", tableUri, "--format", "lance", "--json"], chosen), chosen.stderr).toBe(0);
    expect(JSON.parse(chosen.stdout).map((r: { version: number }) => r.version)).toEqual([1, 2]);
  });

  it("an empty folder is no table of any format, and says what it looked for", async () => {
    const empty = await makeTempDir("lw-detect-empty-");
    dirs.push(empty);
    await expect(detectFormat(new LocalStore(empty))).rejects.toThrow(NotATableError);
    await expect(detectFormat(new LocalStore(empty))).rejects.toThrow(/not a table: no version files under _versions\/ \(lance\), metadata\/ \(iceberg\)/);
  });

  it("an unknown --format is a usage error listing the known ones", async () => {
    const tableUri = await lanceTable();
    const io = new BufferIO();
    expect(await runCli(["versions", tableUri, "--format", "hudi"], io)).toBe(2);
    expect(io.stderr).toMatch(/unknown table format "hudi" \(known: lance, iceberg/);
  });
});
