/**
 * Delta's proveFile (TableFormat.proveFile, for the proof stage before the first delete): every
 * role of file a kept version depends on is whole on the fixture as written, and each damage a
 * copy is given (zero length, truncated, random bytes of the same size) is found, in a few words.
 * A missing file is the pipeline's own check. The references come from the format's own reading
 * of the version, as the pipeline gets them; the damaged files are copies made at test time.
 */
import { randomBytes } from "node:crypto";
import { readFile, stat, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { deltaFormat } from "../../../lib/formats/delta/delta-format.ts";
import type { FileReference } from "../../../lib/formats/table-format.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { copyFixture } from "../../support/fixtures.ts";

type Damage = "zero length" | "truncated" | "random bytes";
const DAMAGES: Damage[] = ["zero length", "truncated", "random bytes"];

async function damage(path: string, how: Damage): Promise<void> {
  const size = (await stat(path)).size;
  if (how === "zero length") return truncate(path, 0);
  if (how === "truncated") return truncate(path, Math.floor(size / 2));
  await writeFile(path, randomBytes(size));
}

interface RoleCase {
  fixture: string;
  role: string;
  /** Which of the version's references of that role (by key). */
  pick?: (key: string) => boolean;
}

const ROLES: RoleCase[] = [
  { fixture: "basic-dv-with-checkpoint", role: "commit" },
  { fixture: "basic-dv-with-checkpoint", role: "checkpoint" },
  { fixture: "multi-part-checkpoint", role: "checkpoint", pick: (k) => k.includes(".checkpoint.0000000002.0000000002.") },
  { fixture: "checkpoint-v2-table", role: "checkpoint", pick: (k) => k.endsWith(".json") },
  { fixture: "checkpoint-v2-table", role: "sidecar" },
  { fixture: "basic-dv-with-checkpoint", role: "data" },
  { fixture: "basic-dv-with-checkpoint", role: "delete" },
  { fixture: "cdc_ict_table", role: "change-data" },
];

/** The first reference of `role` among the versions' (newest first), as the format reads it for cleanup. */
async function referenceOf(store: LocalStore, c: RoleCase): Promise<FileReference> {
  const versions = await deltaFormat.listVersionFiles(store);
  for (const file of versions.reverse()) {
    const view = await deltaFormat.readForCleanup!(store, file);
    const found = view.referencedFiles.find((r) => r.role === c.role && (c.pick?.(r.path) ?? true));
    if (found) return found;
  }
  throw new Error(`no ${c.role} reference in ${c.fixture}`);
}

describe("Delta proveFile", () => {
  it.each(ROLES)("$fixture, a $role file as written: whole", async (c) => {
    const dir = await copyFixture("delta", c.fixture);
    const store = new LocalStore(dir);
    const reference = await referenceOf(store, c);
    expect(await deltaFormat.proveFile!(store, reference, await store.head(reference.path))).toBeNull();
  });

  const damaged = ROLES.flatMap((c) => DAMAGES.map((how) => ({ ...c, how })));
  it.each(damaged)("$fixture, a $role file, $how: the problem in a few words", async (c) => {
    const dir = await copyFixture("delta", c.fixture);
    const store = new LocalStore(dir);
    const reference = await referenceOf(store, c);
    await damage(join(dir, reference.path), c.how);
    const problem = await deltaFormat.proveFile!(store, reference, await store.head(reference.path));
    expect(problem).toEqual(expect.any(String));
    expect(problem!.length).toBeLessThan(200);
    if (c.how === "zero length") expect(problem).toMatch(/^empty \(0 bytes/);
    // Where the log records the size, a truncated file is named as such.
    if (c.how === "truncated" && reference.size !== undefined) expect(problem).toMatch(/^truncated: [\d,]+ of [\d,]+ bytes$/);
  });

  it("a checkpoint damaged inside a page, its footer intact: found by the page checksum, not missed by a footer-only read", async () => {
    const dir = await copyFixture("delta", "basic-dv-with-checkpoint");
    const store = new LocalStore(dir);
    const reference = await referenceOf(store, { fixture: "basic-dv-with-checkpoint", role: "checkpoint" });
    const path = join(dir, reference.path);
    const bytes = await readFile(path);
    const { parquetMetadata } = await import("hyparquet");
    const metadata = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer);
    // The last byte of the first column chunk: inside its last page's data, after every header.
    const first = metadata.row_groups[0]!.columns[0]!.meta_data!;
    const start = Number(first.dictionary_page_offset && first.dictionary_page_offset > 0n ? first.dictionary_page_offset : first.data_page_offset);
    const at = start + Number(first.total_compressed_size) - 1;
    bytes[at] = bytes[at]! ^ 0xff;
    await writeFile(path, bytes);
    expect(() => parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer)).not.toThrow();
    expect(await deltaFormat.proveFile!(store, reference, await store.head(reference.path))).toMatch(/^row group 0, column .*: page \d+ at byte \d+: checksum mismatch$/);
  });
});
