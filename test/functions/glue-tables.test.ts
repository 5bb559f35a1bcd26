/** LAKEWARDEN_GLUE_TABLES as the cleanup function reads it: table URI → Glue entry, or one error naming the variable. */
import { describe, expect, it } from "vitest";
import { readGlueTables } from "../../functions/shared/glue-tables.ts";

describe("readGlueTables", () => {
  it("maps each table URI (trailing slash dropped) to its entry, names lower-cased as Glue stores them; unset is empty", () => {
    const tables = readGlueTables({
      LAKEWARDEN_GLUE_TABLES: JSON.stringify({
        "s3://lake/warehouse/orders/": { database: "Sales", table: "Orders" },
        "s3://lake/warehouse/events": { database: "shared", table: "events", catalogId: "210987654321" },
      }),
    });
    expect([...tables]).toEqual([
      ["s3://lake/warehouse/orders", { database: "sales", table: "orders" }],
      ["s3://lake/warehouse/events", { database: "shared", table: "events", catalogId: "210987654321" }],
    ]);
    expect(readGlueTables({}).size).toBe(0);
    expect(readGlueTables({ LAKEWARDEN_GLUE_TABLES: "" }).size).toBe(0);
  });

  it("refuses what is not an object of entries, naming the variable and the table", () => {
    expect(() => readGlueTables({ LAKEWARDEN_GLUE_TABLES: "{oops" })).toThrow("environment variable LAKEWARDEN_GLUE_TABLES: is not valid JSON");
    expect(() => readGlueTables({ LAKEWARDEN_GLUE_TABLES: '["s3://lake/t"]' })).toThrow(/LAKEWARDEN_GLUE_TABLES: is not a JSON object/);
    expect(() => readGlueTables({ LAKEWARDEN_GLUE_TABLES: '{"s3://lake/t": "sales.t"}' })).toThrow(
      'environment variable LAKEWARDEN_GLUE_TABLES: s3://lake/t: expected {"database": "...", "table": "..."} with an optional "catalogId"',
    );
    expect(() => readGlueTables({ LAKEWARDEN_GLUE_TABLES: '{"s3://lake/t": {"database": "sales"}}' })).toThrow(/s3:\/\/lake\/t: expected/);
  });
});
