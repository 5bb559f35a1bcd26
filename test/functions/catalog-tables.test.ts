/** LAKEWARDEN_CATALOG_TABLES as the functions read it: table URI → REST catalog table, or one error naming the variable and the table. */
import { describe, expect, it } from "vitest";
import { readRestCatalogTables, readTableCatalogs } from "../../functions/shared/catalog-tables.ts";

const entry = { uri: "https://polaris.example.com/api/catalog", namespace: ["sales"], table: "orders", credentialsSecret: "lakewarden/polaris" };

describe("readRestCatalogTables", () => {
  it("maps each table URI (trailing slash dropped) to its entry; unset is empty", () => {
    const tables = readRestCatalogTables({ LAKEWARDEN_CATALOG_TABLES: JSON.stringify({ "s3://lake/warehouse/orders/": { ...entry, warehouse: "lake" } }) });
    expect([...tables]).toEqual([["s3://lake/warehouse/orders", { ...entry, warehouse: "lake" }]]);
    expect(readRestCatalogTables({}).size).toBe(0);
  });

  it("refuses what is not an object of entries, naming the variable and the table", () => {
    expect(() => readRestCatalogTables({ LAKEWARDEN_CATALOG_TABLES: "{oops" })).toThrow("environment variable LAKEWARDEN_CATALOG_TABLES: is not valid JSON");
    expect(() => readRestCatalogTables({ LAKEWARDEN_CATALOG_TABLES: "[]" })).toThrow(/LAKEWARDEN_CATALOG_TABLES: is not a JSON object/);
    for (const bad of [
      { ...entry, uri: "polaris" },
      { ...entry, namespace: "sales" },
      { ...entry, namespace: [] },
      { ...entry, table: "" },
      { ...entry, credentialsSecret: 7 },
    ]) {
      expect(() => readRestCatalogTables({ LAKEWARDEN_CATALOG_TABLES: JSON.stringify({ "s3://lake/t": bad }) }), JSON.stringify(bad)).toThrow(
        'environment variable LAKEWARDEN_CATALOG_TABLES: s3://lake/t: expected {"uri": "https://...", "namespace": ["..."], "table": "..."} with an optional "warehouse" and "credentialsSecret"',
      );
    }
  });
});

describe("readTableCatalogs", () => {
  it("refuses a table both variables name; a table neither names has no catalog (and no catalog client is loaded for it)", async () => {
    const uri = "s3://lake/warehouse/orders";
    expect(() =>
      readTableCatalogs({
        LAKEWARDEN_GLUE_TABLES: JSON.stringify({ [uri]: { database: "sales", table: "orders" } }),
        LAKEWARDEN_CATALOG_TABLES: JSON.stringify({ [`${uri}/`]: entry }),
      }),
    ).toThrow(`environment variable LAKEWARDEN_GLUE_TABLES / LAKEWARDEN_CATALOG_TABLES: ${uri} is named in both: one catalog owns a table's pointer`);
    const catalogs = readTableCatalogs({ LAKEWARDEN_CATALOG_TABLES: JSON.stringify({ [uri]: { ...entry, credentialsSecret: undefined } }) });
    expect(catalogs.size).toBe(1);
    expect(await catalogs.catalogOf("s3://lake/warehouse/users")).toBeNull();
    // No secret named: the catalog is built without reading one, and names the table as messages do.
    expect((await catalogs.catalogOf(`${uri}/`))?.label).toBe('REST catalog table "sales.orders" at https://polaris.example.com/api/catalog');
  });
});
