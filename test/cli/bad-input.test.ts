/**
 * Bad input through the real executable: each case is one line on stderr naming the object
 * and the problem, a non-zero exit, and no stack trace unless --verbose.
 */
import { cp, mkdir, readFile, readdir, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildLanceDataset, makeTempDir, removeDir, type LanceDataset } from "../support/lance-datasets.ts";
import { withGarbageManifest, withManifest } from "../support/manifest-surgery.ts";
import { runLakewarden, type ExecutableResult } from "./run-executable.ts";

let dir: string;
let dataset: LanceDataset;

/** A copy of the dataset whose newest manifest went through `damage`; returns the table path and that manifest's path. */
async function damagedCopy(name: string, damage: (path: string) => Promise<void>): Promise<{ table: string; manifest: string }> {
  const table = join(dir, name, "t.lance");
  await cp(dataset.tableUri, table, { recursive: true });
  const names = (await readdir(join(table, "_versions"))).filter((n) => n.endsWith(".manifest")).sort();
  const manifest = join(table, "_versions", names[0]!); // V2 names sort newest first
  await damage(manifest);
  return { table, manifest };
}

function expectOneLineError(result: ExecutableResult, ...fragments: (string | RegExp)[]): void {
  expect(result.code).not.toBe(0);
  expect(result.stdout).toBe("");
  const lines = result.stderr.trimEnd().split("\n");
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^lakewarden: /);
  expect(lines[0]).not.toMatch(/\n\s+at /);
  for (const fragment of fragments) expect(lines[0]).toMatch(fragment);
}

beforeAll(async () => {
  dir = await makeTempDir("cli-bad-input-");
  dataset = await buildLanceDataset({
    dbUri: join(dir, "db"),
    steps: [
      { op: "create", rows: 10 },
      { op: "append", rows: 5 },
    ],
  });
});
afterAll(async () => {
  dataset?.close();
  await removeDir(dir);
});

describe("lakewarden versions on bad input", () => {
  it("a truncated manifest", async () => {
    const { table, manifest } = await damagedCopy("truncated", (path) => truncate(path, 10));
    expectOneLineError(await runLakewarden(["versions", table]), manifest, /truncated/);
  });

  it("wrong magic bytes", async () => {
    const { table, manifest } = await damagedCopy("magic", async (path) => {
      const bytes = await readFile(path);
      bytes.write("NOPE", bytes.length - 4, "latin1");
      await writeFile(path, bytes);
    });
    expectOneLineError(await runLakewarden(["versions", table]), manifest, /LANC/);
  });

  it("a garbage protobuf", async () => {
    const { table, manifest } = await damagedCopy("garbage", async (path) => {
      await writeFile(path, withGarbageManifest(new Uint8Array(await readFile(path)), path));
    });
    expectOneLineError(await runLakewarden(["versions", table]), manifest, /protobuf/);
  });

  it("unknown reader feature flags", async () => {
    const { table, manifest } = await damagedCopy("flags", async (path) => {
      const patched = withManifest(new Uint8Array(await readFile(path)), path, (m) => {
        m.reader_feature_flags = String(BigInt(m.reader_feature_flags) | (1n << 40n));
      });
      await writeFile(path, patched);
    });
    expectOneLineError(await runLakewarden(["versions", table]), manifest, /feature flags unknown/, /1099511627776/);
  });

  it("a directory that is not a table", async () => {
    const empty = join(dir, "not-a-table");
    await mkdir(empty, { recursive: true });
    await writeFile(join(empty, "readme.txt"), "hello");
    expectOneLineError(await runLakewarden(["versions", empty]), "not-a-table", /not a table|no version files/);
  });

  it("a path that does not exist", async () => {
    expectOneLineError(await runLakewarden(["versions", join(dir, "missing.lance")]), "missing.lance", /no such directory/);
  });

  it("a URI that is not a table location", async () => {
    expectOneLineError(await runLakewarden(["versions", "s3://"]), "s3://");
    expectOneLineError(await runLakewarden(["versions", "http://example.invalid/t.lance"]), "http://example.invalid/t.lance");
  });

  it("an unreachable S3 endpoint", async () => {
    const result = await runLakewarden(["versions", "s3://bucket/t.lance"], {
      AWS_ENDPOINT_URL: "http://127.0.0.1:9",
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "x",
      AWS_SECRET_ACCESS_KEY: "y",
      AWS_MAX_ATTEMPTS: "1",
    });
    expectOneLineError(result, "127.0.0.1:9");
  });

  it("--verbose adds the stack trace", async () => {
    const { table } = await damagedCopy("verbose", (path) => truncate(path, 10));
    const result = await runLakewarden(["--verbose", "versions", table]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/\n\s+at /);
  });
});
