/**
 * The Glue Data Catalog lookup: the real AWS SDK (GlueClient, GetTable) against moto's Glue
 * (behind test/support/glue-server.ts's recording pass-through), and the registry's
 * reading of the entry (lib/formats/catalog.ts): which format, which pointer, and the refusals.
 */
import { GlueClient } from "@aws-sdk/client-glue";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GlueCatalog, GlueLookupError, parseGlueTableName } from "../../lib/catalog/glue.ts";
import { formatAtCatalogPointer } from "../../lib/formats/catalog.ts";
import { CatalogTableError } from "../../lib/formats/errors.ts";
import { icebergFormat } from "../../lib/formats/iceberg/iceberg-format.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { startGlueServer, type GlueServer } from "../support/glue-server.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";

const ROOT = "s3://lake/warehouse/orders";
const CURRENT = `${ROOT}/metadata/00003-6f0e3c1a-2b4d-4c5e-9f70-8a1b2c3d4e5f.metadata.json`;
let moto: MotoHandle;
let glue: GlueServer;
let client: GlueClient;
let catalog: GlueCatalog;

beforeAll(async () => {
  moto = await startMotoServer();
  glue = await startGlueServer(moto);
  client = new GlueClient({ ...glue.clientConfig, maxAttempts: 1 });
  catalog = new GlueCatalog({ client });
});

afterAll(async () => {
  client?.destroy();
  await glue?.stop();
  await moto?.stop();
});

describe("GlueCatalog.table (GetTable through the AWS SDK)", () => {
  it("returns the entry's parameters and type, asking GetTable signed for glue with the database, the table and the catalog", async () => {
    await glue.setTable("sales", "orders", { tableType: "EXTERNAL_TABLE", parameters: { table_type: "ICEBERG", metadata_location: CURRENT }, location: ROOT });
    const before = glue.requests.length;
    const entry = await catalog.table({ database: "sales", table: "orders" });
    // With the entry's VersionId, which guards a commit through Glue (glue-commit.test.ts).
    expect(entry).toEqual({
      label: 'Glue table "orders" in database "sales"',
      tableType: "EXTERNAL_TABLE",
      parameters: { table_type: "ICEBERG", metadata_location: CURRENT },
      version: "1",
    });
    await catalog.table({ database: "sales", table: "orders", catalogId: "210987654321" });
    expect(glue.requests.slice(before)).toEqual([
      { target: "AWSGlue.GetTable", body: { DatabaseName: "sales", Name: "orders" }, signedFor: "glue" },
      { target: "AWSGlue.GetTable", body: { DatabaseName: "sales", Name: "orders", CatalogId: "210987654321" }, signedFor: "glue" },
    ]);
  });

  it("asks again on every call: a pointer the catalog moved is seen at once", async () => {
    await glue.setTable("sales", "moving", { parameters: { table_type: "ICEBERG", metadata_location: `${ROOT}/metadata/00001-a.metadata.json` } });
    expect((await catalog.table({ database: "sales", table: "moving" })).parameters.metadata_location).toBe(`${ROOT}/metadata/00001-a.metadata.json`);
    await glue.setTable("sales", "moving", { parameters: { table_type: "ICEBERG", metadata_location: CURRENT } });
    expect((await catalog.table({ database: "sales", table: "moving" })).parameters.metadata_location).toBe(CURRENT);
  });

  it("EntityNotFoundException: one line naming the table and the database", async () => {
    const error = await catalog.table({ database: "sales", table: "missing" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GlueLookupError);
    expect((error as GlueLookupError).code).toBe("EntityNotFoundException");
    expect((error as Error).message).toBe(
      'Glue table "missing" in database "sales": not found in the Glue Data Catalog (EntityNotFoundException: Table missing not found.); nothing read, written or deleted',
    );
  });

  it("AccessDeniedException: one line naming the table, the database and the permission needed", async () => {
    await glue.setTable("sales", "secret", { parameters: { table_type: "ICEBERG", metadata_location: CURRENT } });
    glue.failTable("sales", "secret", "AccessDeniedException");
    const error = await catalog.table({ database: "sales", table: "secret" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GlueLookupError);
    expect((error as GlueLookupError).code).toBe("AccessDeniedException");
    const message = (error as Error).message;
    expect(message.split("\n")).toHaveLength(1);
    expect(message).toMatch(/^Glue table "secret" in database "sales": access denied \(AccessDeniedException: User: .* is not authorized to perform: glue:GetTable/);
    expect(message).toContain("the role needs glue:GetTable on the catalog, the database and the table; nothing read, written or deleted");
  });
});

describe("parseGlueTableName", () => {
  it("takes database.table (lower-cased, as Glue stores names) and refuses other shapes", () => {
    expect(parseGlueTableName("sales.orders")).toEqual({ database: "sales", table: "orders" });
    expect(parseGlueTableName("Sales.Orders_2024")).toEqual({ database: "sales", table: "orders_2024" });
    expect(parseGlueTableName("sales.orders.v2")).toEqual({ database: "sales", table: "orders.v2" });
    for (const bad of ["orders", ".orders", "sales.", "sales.ord*", "sales.a b", "s3://b/t"]) expect(parseGlueTableName(bad), bad).toBeNull();
  });
});

describe("formatAtCatalogPointer", () => {
  const store = openStore(ROOT);
  const entry = (parameters: Record<string, string>, tableType?: string) => ({ label: 'Glue table "orders" in database "sales"', parameters, ...(tableType ? { tableType } : {}) });

  it("reads an ICEBERG entry (any case) as Iceberg at its metadata_location, a key under the table root", () => {
    for (const type of ["ICEBERG", "iceberg"]) {
      const found = formatAtCatalogPointer(store, entry({ table_type: type, metadata_location: CURRENT, previous_metadata_location: `${ROOT}/metadata/00002-x.metadata.json` }));
      expect(found.format.name).toBe(icebergFormat.name);
      expect(found.key).toBe("metadata/00003-6f0e3c1a-2b4d-4c5e-9f70-8a1b2c3d4e5f.metadata.json");
      expect(found.pointer).toBe(CURRENT);
      // The format bound to the pointer: it never expires snapshots (the catalog owns the commits).
      expect(found.format.removal.kind === "metadata-commit" && found.format.removal.keptTogether([], [1])).toEqual(
        new Map([[1, expect.stringContaining("the catalog owns this table's commits")]]),
      );
    }
    // Hadoop's s3a:// names the same objects.
    expect(formatAtCatalogPointer(store, entry({ table_type: "ICEBERG", metadata_location: CURRENT.replace("s3://", "s3a://") })).key).toMatch(/^metadata\/00003-/);
  });

  it("refuses an entry that is not Iceberg, saying what the catalog says it is", () => {
    for (const [parameters, said] of [
      [{ classification: "parquet" }, "has no table_type parameter, not ICEBERG (table type EXTERNAL_TABLE)"],
      [{ table_type: "DELTA", metadata_location: CURRENT }, 'has table_type "DELTA", not ICEBERG (table type EXTERNAL_TABLE)'],
    ] as const) {
      expect(() => formatAtCatalogPointer(store, entry(parameters, "EXTERNAL_TABLE"))).toThrow(CatalogTableError);
      expect(() => formatAtCatalogPointer(store, entry(parameters, "EXTERNAL_TABLE"))).toThrow(
        `Glue table "orders" in database "sales": is not a table lakewarden reads through a catalog (iceberg: ${said}); nothing read, written or deleted at ${ROOT}`,
      );
    }
  });

  it("refuses a metadata_location outside the table root, a relative one, or none", () => {
    for (const elsewhere of [
      "s3://lake/warehouse/orders_old/metadata/00003-a.metadata.json",
      "s3://other/warehouse/orders/metadata/00003-a.metadata.json",
      "s3://lake/warehouse/orders/../x/metadata/00001-a.metadata.json",
    ]) {
      expect(() => formatAtCatalogPointer(store, entry({ table_type: "ICEBERG", metadata_location: elsewhere }))).toThrow(
        `Glue table "orders" in database "sales": metadata_location ${JSON.stringify(elsewhere)} is not under the table root, ${ROOT}`,
      );
    }
    expect(() => formatAtCatalogPointer(store, entry({ table_type: "ICEBERG", metadata_location: "metadata/00003-a.metadata.json" }))).toThrow(/is not a URI/);
    expect(() => formatAtCatalogPointer(store, entry({ table_type: "ICEBERG" }))).toThrow(/is an Iceberg table without a metadata_location parameter/);
  });
});
