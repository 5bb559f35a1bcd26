/**
 * The inline budget on a table of 10,000 fragments (a snapshot built in memory, as no test
 * should write 10,000 data files): mandatory sections always go in, footers only within the
 * budget, newest fragments first; and the JSON codec decodes to the same state as Arrow.
 */
import { describe, expect, it } from "vitest";
import type { DataFileFooter } from "../../lib/formats/data-file-footer.ts";
import type { LiveFile, FileReference, TableSnapshot } from "../../lib/formats/table-format.ts";
import { buildHead } from "../../lib/head/builder.ts";
import { DEFAULT_COMPRESSION } from "../../lib/head/compression.ts";
import type { BuiltHead } from "../../lib/head/builder.ts";
import { decodeHead } from "../../lib/head/container.ts";
import { modelToContent } from "../../lib/head/content.ts";
import type { HeadContent } from "../../lib/head/content.ts";
import { HEAD_HEADER_BYTES } from "../../lib/head/header.ts";
import { DEFAULT_HEAD_INLINE_BYTES, InvalidHeadSettingError, resolveHeadSettings } from "../../lib/head/settings.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import type { VersionRecord } from "../../lib/model/version-record.ts";

const FRAGMENTS = 10_000;
const FOOTER_BYTES = 3 * 1024;
const URI = "file:///lake/big.lance/_lakewarden/head";
const store = new LocalStore("/nonexistent-lakewarden-budget-test");

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, "0");
}

function record(version: number): VersionRecord {
  return {
    version,
    timestamp_millis: 1_700_000_000_000 + version * 1000,
    total_fragments: FRAGMENTS,
    total_data_files: FRAGMENTS,
    total_files_size: FRAGMENTS * 100_000,
    total_deletion_files: FRAGMENTS / 10,
    total_data_file_rows: FRAGMENTS * 1000,
    total_deletion_file_rows: FRAGMENTS / 10,
    total_rows: FRAGMENTS * 1000 - FRAGMENTS / 10,
    is_tagged: false,
    is_cleaned_up: false,
    transaction_uuid: `${hex(version, 8)}-0000-4000-8000-000000000000`,
    read_version: version - 1,
    operation_type: "Append",
    transaction_properties: { writer: "budget-test" },
    version_id: String(version),
    parent_ids: [String(version - 1)],
    branch: null,
    metrics: {},
  };
}

function bigSnapshot(): TableSnapshot {
  const liveFiles: LiveFile[] = [];
  const referencedFiles: FileReference[] = [];
  for (let id = 0; id < FRAGMENTS; id++) {
    const path = `data/${hex(id * 2654435761, 12)}-${hex(id, 8)}-4c1f-9d2e-${hex(id * 40503, 12)}.lance`;
    const deletionFile = id % 10 === 0 ? `_deletions/${id}-41-${id * 7}.arrow` : null;
    liveFiles.push({ fragmentId: id, paths: [path], size: 100_000, physicalRows: 1000, deletionFile, deletedRows: deletionFile ? 1 : 0 });
    referencedFiles.push({ path, role: "data", size: 100_000 });
    if (deletionFile) referencedFiles.push({ path: deletionFile, role: "delete" });
  }
  referencedFiles.push({ path: "_indices/0b5c4d2e-0000-4000-8000-000000000001/", role: "index" });
  const raw = new Uint8Array(FRAGMENTS * 90);
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 2654435761) >>> 24;
  return {
    record: record(50),
    unresolvedReferences: [],
    referencedFiles,
    liveFiles,
    schema: [
      { id: 0, parentId: -1, name: "id", logicalType: "int32", nullable: false },
      { id: 1, parentId: -1, name: "vector", logicalType: "fixed_size_list:float:128", nullable: true },
    ],
    config: { "lakewarden.head_codec": "arrow" },
    raw,
    versionFile: { version: 50, key: "_versions/18446744073709551565.manifest", size: raw.length, etag: '"e50"', lastModified: new Date(1_700_000_050_000) },
  };
}

/** Synthetic footers (the bytes are not what matters here, their size is); counts reads. */
function footerSource(reads: string[]) {
  return {
    store,
    read: async (_store: unknown, path: string): Promise<DataFileFooter> => {
      reads.push(path);
      const bytes = new Uint8Array(FOOTER_BYTES).fill(path.length % 251);
      return { path, fileSize: 100_000, offset: 100_000 - FOOTER_BYTES, bytes };
    },
  };
}

const snapshot = bigSnapshot();
const recentVersions = { after: 0, records: Array.from({ length: 50 }, (_, i) => record(i + 1)) };

async function build(codec: "arrow" | "json", inlineBudgetBytes: number, reads: string[] = []): Promise<BuiltHead> {
  return buildHead({ formatName: "lance", snapshot, recentVersions, codec, inlineBudgetBytes, footers: footerSource(reads), now: () => 1 });
}

function decoded(head: BuiltHead): HeadContent {
  return modelToContent(decodeHead(head.bytes, URI).model, URI);
}

describe("inline budget with 10,000 fragments", () => {
  it("keeps every mandatory section even beyond the default budget, and then adds no footer", async () => {
    const reads: string[] = [];
    const head = await build("arrow", DEFAULT_HEAD_INLINE_BYTES, reads);
    expect(head.mandatoryBytes).toBeGreaterThan(DEFAULT_HEAD_INLINE_BYTES);
    expect(head.content.footers).toEqual([]);
    expect(head.content.footersOmitted).toBe(FRAGMENTS);
    expect(reads).toEqual([]);
    expect(head.header.decodedLength).toBe(head.mandatoryBytes);
    const content = decoded(head);
    expect(content.snapshot.liveFiles).toEqual(snapshot.liveFiles);
    expect(content.snapshot.referencedFiles).toEqual(snapshot.referencedFiles);
    expect(Buffer.from(content.snapshot.raw).equals(Buffer.from(snapshot.raw))).toBe(true);
  });

  it.each(["arrow", "json"] as const)("%s: fills the room above the mandatory sections with the newest fragments' footers, no more", async (codec) => {
    const mandatory = (await build(codec, 0)).mandatoryBytes;
    const budget = mandatory + 100 * 1024;
    const reads: string[] = [];
    const head = await build(codec, budget, reads);
    // Only the recorded budget and omitted count (a few digits) differ from the footer-less build.
    expect(Math.abs(head.mandatoryBytes - mandatory)).toBeLessThan(32);
    // Within budget + nothing: the whole body, uncompressed, fits the budget...
    expect(head.header.decodedLength).toBeLessThanOrEqual(budget);
    // ...and the stored head is no larger than that plus the header (gzip never expands it much).
    expect(head.bytes.length).toBeLessThanOrEqual(HEAD_HEADER_BYTES + budget);
    const footers = head.content.footers;
    expect(footers.length).toBeGreaterThan(10);
    // Newest fragments first, without gaps.
    const expectedIds = Array.from({ length: footers.length }, (_, i) => FRAGMENTS - 1 - i);
    expect(footers.map((f) => f.path)).toEqual(expectedIds.map((id) => snapshot.liveFiles[id]!.paths[0]));
    expect(head.content.footersOmitted).toBe(FRAGMENTS - footers.length);
    // Reads stop right after the first footer that did not fit by the raw-byte estimate
    // (json spends 4/3 per binary byte in base64, so it reads a few it then leaves out).
    const expansion = codec === "json" ? 4 / 3 : 1;
    expect(reads.length).toBeLessThanOrEqual(Math.ceil(footers.length * expansion) + 1);
    // And the room left is too small for much more: less than two more footers.
    const perFooter = (head.header.decodedLength - head.mandatoryBytes) / footers.length;
    expect(budget - head.header.decodedLength).toBeLessThan(2 * perFooter);
    expect(decoded(head).footers).toEqual(footers);
  });

  it("the JSON codec decodes to the same state as the Arrow codec", async () => {
    const [arrow, json] = await Promise.all([build("arrow", 0), build("json", 0)]);
    expect(json.header.codec).toBe("json");
    expect(arrow.header.codec).toBe("arrow");
    expect(decoded(json)).toEqual(decoded(arrow));

    // With footers the budget admits fewer in JSON (base64), and those are the same newest ones.
    const budget = arrow.mandatoryBytes + json.mandatoryBytes;
    const [arrowFull, jsonFull] = await Promise.all([build("arrow", budget), build("json", budget)]);
    const a = decoded(arrowFull);
    const j = decoded(jsonFull);
    expect(j.snapshot).toEqual(a.snapshot);
    expect(j.recentVersions).toEqual(a.recentVersions);
    expect(j.footers.length).toBeGreaterThan(0);
    expect(j.footers).toEqual(a.footers.slice(0, j.footers.length));
  });

  it("bounds footer reads per head", async () => {
    const reads: string[] = [];
    const head = await buildHead({
      formatName: "lance",
      snapshot,
      recentVersions,
      inlineBudgetBytes: 64 * 1024 * 1024,
      footers: { ...footerSource(reads), maxReads: 5 },
    });
    expect(reads).toHaveLength(5);
    expect(head.content.footers).toHaveLength(5);
  });
});

describe("head settings", () => {
  it("come from the table config, and bad values are errors naming the table", () => {
    const withConfig = (config: Record<string, string>) => ({ ...snapshot, config });
    expect(resolveHeadSettings(withConfig({}), URI)).toMatchObject({ inlineBudgetBytes: DEFAULT_HEAD_INLINE_BYTES, compression: DEFAULT_COMPRESSION });
    expect(resolveHeadSettings(withConfig({}), URI).codec.name).toBe("arrow");
    const custom = resolveHeadSettings(withConfig({ "lakewarden.head_codec": "json", "lakewarden.head_inline_bytes": "4096" }), URI);
    expect(custom.codec.name).toBe("json");
    expect(custom.inlineBudgetBytes).toBe(4096);
    expect(resolveHeadSettings(withConfig({ "lakewarden.head_codec": "json" }), URI, { codec: "arrow" }).codec.name).toBe("arrow");
    expect(() => resolveHeadSettings(withConfig({ "lakewarden.head_codec": "avro" }), URI)).toThrow(InvalidHeadSettingError);
    expect(() => resolveHeadSettings(withConfig({ "lakewarden.head_codec": "avro" }), URI)).toThrow(/big\.lance.*head codec "avro" is unknown/);
    expect(() => resolveHeadSettings(withConfig({ "lakewarden.head_inline_bytes": "1MB" }), URI)).toThrow(/head_inline_bytes "1MB" is not a byte count/);
  });
});
