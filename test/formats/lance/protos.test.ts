import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import protobuf from "protobufjs";
import { CorruptFileError } from "../../../lib/formats/errors.ts";
import { decodeManifest, decodeTransaction, encodeManifest, encodeTransaction } from "../../../lib/formats/lance/proto-messages.ts";
import { DESCRIPTOR_FILE, generateDescriptorSource } from "../../../lib/formats/lance/protos/generate-descriptor.ts";

describe("Lance protobuf descriptor", () => {
  it("is exactly what the .proto files generate (regenerate with generate-descriptor.ts)", async () => {
    const committed = await readFile(new URL(`../../../lib/formats/lance/protos/${DESCRIPTOR_FILE}`, import.meta.url), "utf8");
    expect(committed).toBe(await generateDescriptorSource());
  });

  it("keeps 64-bit values exact", () => {
    const bytes = encodeManifest({
      version: "3",
      reader_feature_flags: "18446744073709551615",
      fragments: [{ id: "0", deletion_file: { id: "5336894699785221688", read_version: "2", num_deleted_rows: "1" } }],
    });
    const manifest = decodeManifest(bytes, "mem://m");
    expect(manifest.reader_feature_flags).toBe("18446744073709551615");
    expect(manifest.fragments[0]!.deletion_file!.id).toBe("5336894699785221688");
  });

  it("skips fields it does not know (newer writers)", () => {
    const known = encodeManifest({ version: "4", transaction_file: "3-x.txn" });
    // Field 99 (length-delimited) and field 98 (varint), as a newer writer might add.
    const writer = protobuf.Writer.create();
    writer.uint32((99 << 3) | 2).string("from the future");
    writer.uint32((98 << 3) | 0).uint64(12345);
    const extra = writer.finish();
    const bytes = new Uint8Array([...known, ...extra]);
    const manifest = decodeManifest(bytes, "mem://m");
    expect(manifest.version).toBe("4");
    expect(manifest.transaction_file).toBe("3-x.txn");
  });

  it("names the transaction's operation oneof case", () => {
    const bytes = encodeTransaction({ read_version: "4", uuid: "u", create_index: {} });
    expect(decodeTransaction(bytes, "mem://t")).toMatchObject({ read_version: "4", uuid: "u", operation: "create_index" });
    // A case number this reader does not know: the operation stays unset.
    const writer = protobuf.Writer.create();
    writer.uint32((1 << 3) | 0).uint64(2);
    writer.uint32((190 << 3) | 2).bytes(new Uint8Array([8, 1]));
    expect(decodeTransaction(writer.finish(), "mem://t").operation).toBeUndefined();
  });

  it("reports undecodable bytes as CorruptFileError naming the object", () => {
    const garbage = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    expect(() => decodeManifest(garbage, "s3://b/t.lance/_versions/1.manifest")).toThrow(CorruptFileError);
    expect(() => decodeManifest(garbage, "s3://b/t.lance/_versions/1.manifest")).toThrow(/^s3:\/\/b\/t\.lance\/_versions\/1\.manifest: cannot decode the Manifest protobuf/);
  });
});
