/**
 * The safety gate is a step of its own (TableFormat.admit), not a side effect of a read: a table
 * the format refuses to maintain still reads for cleanup, while the format's admit refuses it in
 * one line, and a cleanup (dry run and real run) stops with that line before it plans anything,
 * nothing written or deleted. Real tables: a Delta fixture given a writer feature lakewarden does
 * not know, an Iceberg fixture with gc.enabled=false.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { UnsupportedFeatureError } from "../../lib/formats/errors.ts";
import { deltaFormat } from "../../lib/formats/delta/delta-format.ts";
import { icebergFormat } from "../../lib/formats/iceberg/iceberg-format.ts";
import type { TableFormat } from "../../lib/formats/table-format.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { appendCommit, latestProtocolAndMetadata, listKeys } from "../formats/delta/log-surgery.ts";
import { copyFixture } from "../support/fixtures.ts";
import { copyIcebergFixture, rewriteMetadata } from "../support/iceberg-fixtures.ts";

async function unknownWriterFeature(): Promise<string> {
  const dir = await copyFixture("delta", "basic-with-vacuum-protocol-check-feature");
  const { protocol, metaData } = await latestProtocolAndMetadata(dir);
  await appendCommit(dir, 2, [
    { commitInfo: { operation: "UPGRADE PROTOCOL" } },
    { protocol: { ...protocol, writerFeatures: [...(protocol.writerFeatures as string[]), "someFutureWriterFeature"] } },
    { metaData },
  ]);
  return dir;
}

async function gcDisabled(): Promise<string> {
  const copy = await copyIcebergFixture("spark-bunnies");
  onTestFinished(copy.remove);
  await rewriteMetadata(copy.dir, (json) => {
    json.properties = { ...(json.properties as object), "gc.enabled": "false" } as never;
  });
  return copy.dir;
}

const CASES: { name: string; format: TableFormat; table: () => Promise<string>; refusal: RegExp }[] = [
  { name: "Delta, an unknown writer feature", format: deltaFormat, table: unknownWriterFeature, refusal: /unsupported Delta writer feature "someFutureWriterFeature"; no cleanup/ },
  {
    name: "Iceberg, gc.enabled=false",
    format: icebergFormat,
    table: gcDisabled,
    refusal: /gc\.enabled is false: the table forbids maintenance from deleting its files; nothing deleted/,
  },
];

describe("the safety gate", () => {
  it.each(CASES)("$name: reads for cleanup, admit refuses in one line, cleanup stops before planning", async ({ format, table, refusal }) => {
    const dir = await table();
    const store = new LocalStore(dir);
    const latest = (await format.latestVersionFile(store))!;
    // A read is only a read.
    expect((await format.readForCleanup(store, latest)).record.version).toBe(latest.version);
    const admission = await format.admit(store, latest);
    expect(admission.admitted).toBe(false);
    if (admission.admitted) return;
    expect(admission.refusal).toBeInstanceOf(UnsupportedFeatureError);
    expect(admission.refusal.message).toMatch(refusal);
    expect(admission.refusal.message).not.toContain("\n");

    const before = await listKeys(dir);
    for (const dryRun of [true, false]) {
      await expect(runCleanup(store, { format, dryRun, settings: { olderThanMs: 0 }, now: () => new Date(Date.now() + 400 * 86_400_000) })).rejects.toThrow(refusal);
    }
    expect((await listKeys(dir)).filter((key) => !key.startsWith("_lakewarden/"))).toEqual(before);
  });

  it("admits the same tables without the condition", async () => {
    const delta = new LocalStore(await copyFixture("delta", "basic-with-vacuum-protocol-check-feature"));
    expect(await deltaFormat.admit(delta, (await deltaFormat.latestVersionFile(delta))!)).toEqual({ admitted: true });
    const copy = await copyIcebergFixture("spark-bunnies");
    onTestFinished(copy.remove);
    const iceberg = new LocalStore(copy.dir);
    expect(await icebergFormat.admit(iceberg, (await icebergFormat.latestVersionFile(iceberg))!)).toEqual({ admitted: true });
  });
});
