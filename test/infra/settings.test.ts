import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS, InvalidSettingError, resolveSettings, settingsFromContext } from "../../infra/settings.ts";

describe("resolveSettings", () => {
  it("fills defaults and normalizes tables and prefixes", () => {
    expect(resolveSettings({ tables: ["lake/orders.lance/"], tablePrefixes: ["warehouse"], tableRoots: ["warehouse/sales.lance/"] })).toEqual({
      ...DEFAULT_SETTINGS,
      tables: ["lake/orders.lance"],
      tablePrefixes: ["warehouse/"],
      tableRoots: ["warehouse/sales.lance"],
    });
    expect(resolveSettings({ tablePrefixes: ["warehouse/"], prefixWideAccess: true })).toMatchObject({ tableRoots: [], prefixWideAccess: true });
  });

  it("refuses what would widen access or confuse S3 notifications, naming the setting", () => {
    const cases: [Parameters<typeof resolveSettings>[0], RegExp][] = [
      [{}, /setting tables: name at least one table/],
      [{ tablePrefixes: [""] }, /tablePrefixes: the whole bucket cannot be a table prefix/],
      [{ tablePrefixes: ["lake/"] }, /setting tableRoots: name the tables under lake\/ that lakewarden may change/],
      [{ tablePrefixes: ["lake/"], tableRoots: ["lakehouse/t.lance"] }, /tableRoots: "lakehouse\/t.lance" is under none of the tablePrefixes/],
      [{ tablePrefixes: ["lake/"], tableRoots: ["lake/t.lance", "lake/t.lance/"] }, /tableRoots: "lake\/t.lance" is listed twice/],
      [{ tablePrefixes: ["lake/"], tableRoots: ["lake/t.lance", "lake/t.lance/sub"] }, /tableRoots: "lake\/t.lance\/sub" is inside table "lake\/t.lance"/],
      [{ tablePrefixes: ["lake/"], tableRoots: ["lake/*"] }, /tableRoots: "lake\/\*" contains a wildcard/],
      [{ tablePrefixes: ["lake/"], tableRoots: ["lake/t.lance"], prefixWideAccess: true }, /tableRoots: prefixWideAccess already grants/],
      [{ tablePrefixes: ["/"] }, /the whole bucket/],
      [{ tables: ["s3://b/t.lance"] }, /is a URI/],
      [{ tables: ["lake/../t.lance"] }, /not a clean relative path/],
      [{ tables: ["/abs/t.lance"] }, /not a clean relative path/],
      [{ tablePrefixes: ["lake/*"] }, /wildcard/],
      [{ tables: ["lake/t.lance"], tablePrefixes: ["lake/"] }, /table "lake\/t.lance" and prefix "lake" overlap/],
      [{ tablePrefixes: ["lake/", "lake/sub/"] }, /overlap/],
      [{ tables: ["a.lance", "a.lance"] }, /overlap/],
      [{ tables: ["t"], cleanupSchedule: "every day" }, /cleanupSchedule: "every day" is not rate/],
      [{ tables: ["t"], retention: { olderThan: "seven days" } }, /olderThan/],
      [{ tables: ["t"], retention: { retainVersions: 0 } }, /retainVersions: 0 is not a positive integer/],
      [{ tables: ["t"], head: { codec: "xml" as "json" } }, /headCodec: "xml" is not one of arrow, json/],
      [{ tables: ["t"], head: { inlineBytes: -1 } }, /headInlineBytes: -1 is not a byte count/],
    ];
    for (const [input, message] of cases) {
      expect(() => resolveSettings(input), JSON.stringify(input)).toThrow(InvalidSettingError);
      expect(() => resolveSettings(input), JSON.stringify(input)).toThrow(message);
    }
  });

  it("lets neighbouring tables with a common name start coexist", () => {
    expect(resolveSettings({ tables: ["a.lance", "a.lance2"] }).tables).toEqual(["a.lance", "a.lance2"]);
  });
});

describe("settingsFromContext", () => {
  it("reads JSON arrays from cdk.json and comma lists or strings from -c", () => {
    const context: Record<string, unknown> = {
      "lakewarden:tables": "a.lance, b.lance",
      "lakewarden:tablePrefixes": '["lake/"]',
      "lakewarden:tableRoots": "lake/x.lance,lake/eu/y.lance",
      "lakewarden:retainVersions": "3",
      "lakewarden:headInlineBytes": 2048,
      "lakewarden:headCodec": "json",
      "lakewarden:cleanupSchedule": "cron(0 3 * * ? *)",
    };
    const settings = settingsFromContext((key) => context[key]);
    expect(settings.tables).toEqual(["a.lance", "b.lance"]);
    expect(settings.tablePrefixes).toEqual(["lake/"]);
    expect(settings.tableRoots).toEqual(["lake/x.lance", "lake/eu/y.lance"]);
    expect(settings.prefixWideAccess).toBe(false);
    const wide = settingsFromContext((key) => ({ "lakewarden:tablePrefixes": "lake/", "lakewarden:prefixWideAccess": "true" })[key]);
    expect(wide.prefixWideAccess).toBe(true);
    expect(settings.retention).toEqual({ retainVersions: 3 });
    expect(settings.head).toEqual({ codec: "json", inlineBytes: 2048 });
    expect(settings.cleanupSchedule).toBe("cron(0 3 * * ? *)");
  });

  it("names the setting whose context value has the wrong type", () => {
    expect(() => settingsFromContext((key) => (key === "lakewarden:tables" ? 42 : undefined))).toThrow(/setting tables: expected a list/);
    expect(() => settingsFromContext((key) => (key === "lakewarden:tables" ? "[oops" : undefined))).toThrow(/setting tables: \[oops is not valid JSON/);
    const context: Record<string, unknown> = { "lakewarden:tables": ["t"], "lakewarden:retainVersions": "many" };
    expect(() => settingsFromContext((key) => context[key])).toThrow(/retainVersions: expected a number/);
    expect(() => settingsFromContext((key) => ({ "lakewarden:tablePrefixes": "lake/", "lakewarden:prefixWideAccess": "yes" })[key])).toThrow(
      /setting prefixWideAccess: expected true or false, got "yes"/,
    );
  });

  it("cdk.json leaves the retention a table declares in charge: no olderThan or retainVersions by default", () => {
    const context = (JSON.parse(readFileSync(new URL("../../cdk.json", import.meta.url), "utf8")) as { context: Record<string, unknown> }).context;
    const settings = settingsFromContext((key) => (key === "lakewarden:tables" ? "lake/t.lance" : context[key]));
    expect(settings.retention?.olderThan).toBeUndefined();
    expect(settings.retention?.retainVersions).toBeUndefined();
  });
});

describe("glueTables and minWorkPerRun", () => {
  const scopes = { tables: ["lake/orders"], tablePrefixes: ["warehouse/"], tableRoots: ["warehouse/events"] };

  it("takes database.table or an object per writable table root, lower-cased as Glue stores names", () => {
    const settings = resolveSettings({
      ...scopes,
      glueTables: { "lake/orders/": "Sales.Orders", "warehouse/events": { database: "shared", table: "events", catalogId: "210987654321" } },
      minWorkPerRun: 500,
    });
    expect(settings.glueTables).toEqual({
      "lake/orders": { database: "sales", table: "orders" },
      "warehouse/events": { database: "shared", table: "events", catalogId: "210987654321" },
    });
    expect(settings.minWorkPerRun).toBe(500);
    const none = resolveSettings(scopes);
    expect(none.glueTables).toEqual({});
    expect(none).not.toHaveProperty("minWorkPerRun");
  });

  it("refuses a Glue table lakewarden may not change, a malformed name or catalog id, and a minimum of no work", () => {
    expect(() => resolveSettings({ ...scopes, glueTables: { "warehouse/other": "sales.other" } })).toThrow(
      'lakewarden setting glueTables: "warehouse/other" is not a table lakewarden may change; list it in tables or tableRoots first',
    );
    expect(() => resolveSettings({ ...scopes, glueTables: { "lake/orders": "orders" } })).toThrow(
      /setting glueTables: "lake\/orders": "orders" is not a Glue table name; write database.table/,
    );
    expect(() => resolveSettings({ ...scopes, glueTables: { "lake/orders": "sales.ord*" } })).toThrow(/is not a Glue table name/);
    expect(() => resolveSettings({ ...scopes, glueTables: { "lake/orders": { database: "sales", table: "orders", catalogId: "me" } } })).toThrow(
      /catalogId "me" is not a 12-digit AWS account id/,
    );
    expect(() => resolveSettings({ ...scopes, minWorkPerRun: 0 })).toThrow(/setting minWorkPerRun: 0 is not a positive integer/);
    // Under a prefix with prefixWideAccess every table may be changed.
    expect(resolveSettings({ tablePrefixes: ["warehouse/"], prefixWideAccess: true, glueTables: { "warehouse/any": "db.any" } }).glueTables).toEqual({
      "warehouse/any": { database: "db", table: "any" },
    });
  });

  it("reads them from context: a JSON object, root=database.table pairs, a number as text", () => {
    const base: Record<string, unknown> = { "lakewarden:tables": "lake/orders,lake/users" };
    const json = settingsFromContext((key) => ({ ...base, "lakewarden:glueTables": '{"lake/orders": "sales.orders"}', "lakewarden:minWorkPerRun": "200" })[key]);
    expect(json.glueTables).toEqual({ "lake/orders": { database: "sales", table: "orders" } });
    expect(json.minWorkPerRun).toBe(200);
    const pairs = settingsFromContext((key) => ({ ...base, "lakewarden:glueTables": "lake/orders=sales.orders, lake/users=crm.users" })[key]);
    expect(pairs.glueTables).toEqual({ "lake/orders": { database: "sales", table: "orders" }, "lake/users": { database: "crm", table: "users" } });
    const object = settingsFromContext((key) => ({ ...base, "lakewarden:glueTables": { "lake/users": { database: "crm", table: "users" } } })[key]);
    expect(object.glueTables).toEqual({ "lake/users": { database: "crm", table: "users" } });
    expect(() => settingsFromContext((key) => ({ ...base, "lakewarden:glueTables": "lake/orders" })[key])).toThrow(
      /setting glueTables: "lake\/orders" is not table-root=database.table/,
    );
    expect(() => settingsFromContext((key) => ({ ...base, "lakewarden:glueTables": ["lake/orders"] })[key])).toThrow(/setting glueTables: expected an object/);
  });
});

describe("restCatalogTables", () => {
  const scopes = { tables: ["lake/orders"], tablePrefixes: ["warehouse/"], tableRoots: ["warehouse/events"] };
  const orders = { uri: "https://polaris.example.com/api/catalog", table: "sales.orders", credentialsSecret: "lakewarden/polaris" };

  it("splits the namespace, keeps the secret's id and drops a trailing slash of the URI; unset is empty", () => {
    const settings = resolveSettings({
      ...scopes,
      restCatalogTables: {
        "lake/orders/": { ...orders, uri: `${orders.uri}/`, warehouse: "lake" },
        "warehouse/events": { uri: "https://nessie.example.com/iceberg", table: "a.b.events" },
      },
    });
    expect(settings.restCatalogTables).toEqual({
      "lake/orders": { uri: orders.uri, warehouse: "lake", namespace: ["sales"], table: "orders", credentialsSecret: "lakewarden/polaris" },
      "warehouse/events": { uri: "https://nessie.example.com/iceberg", namespace: ["a", "b"], table: "events" },
    });
    expect(resolveSettings(scopes).restCatalogTables).toEqual({});
    // Resolved settings resolve to themselves (the CDK app resolves context, the construct its props).
    expect(resolveSettings({ ...scopes, restCatalogTables: settings.restCatalogTables }).restCatalogTables).toEqual(settings.restCatalogTables);
  });

  it("refuses each unusable entry naming the setting and the table", () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ "warehouse/other": orders }, /setting restCatalogTables: "warehouse\/other" is not a table lakewarden may change/],
      [{ "lake/orders": { ...orders, uri: "http://polaris.example.com" } }, /"lake\/orders": uri "http:\/\/polaris.example.com" is not an https:\/\/ URI/],
      [{ "lake/orders": { ...orders, table: "orders" } }, /"lake\/orders": table "orders" is not namespace.table/],
      [{ "lake/orders": { ...orders, credentialsSecret: "a secret value!" } }, /credentialsSecret "a secret value!" is neither a Secrets Manager secret's ARN nor its name/],
      [{ "lake/orders": { ...orders, clientSecret: "x" } }, /"lake\/orders": unknown key clientSecret/],
      [{ "lake/orders": { ...orders, uri: "https://s3tables.eu-west-1.amazonaws.com/iceberg" } }, /is S3 Tables' endpoint: S3 Tables keeps a table's files in its own storage/],
      [{ "lake/orders": { ...orders, uri: "https://glue.eu-west-1.amazonaws.com/iceberg" } }, /is Glue's Iceberg endpoint: name the same table in glueTables/],
      [{ "lake/orders": "sales.orders" }, /"lake\/orders": "sales.orders" is not a REST catalog table/],
      [{ "lake/orders": { ...orders, namespace: "sales" } }, /"lake\/orders": namespace "sales" is not a list of namespace levels/],
      [{ "lake/orders": { ...orders, namespace: ["sales"] } }, /"lake\/orders": table "sales.orders" is not a table name \(with namespace given, the bare name\)/],
    ];
    for (const [restCatalogTables, message] of cases) {
      expect(() => resolveSettings({ ...scopes, restCatalogTables: restCatalogTables as never }), message.source).toThrow(message);
    }
    expect(() => resolveSettings({ ...scopes, glueTables: { "lake/orders": "sales.orders" }, restCatalogTables: { "lake/orders": orders } })).toThrow(
      'lakewarden setting restCatalogTables: "lake/orders" is also in glueTables: one catalog owns a table\'s pointer',
    );
  });

  it("reads a JSON object from context", () => {
    const base = { "lakewarden:tables": "lake/orders" } as Record<string, unknown>;
    const settings = settingsFromContext((key) => ({ ...base, "lakewarden:restCatalogTables": JSON.stringify({ "lake/orders": orders }) })[key]);
    expect(settings.restCatalogTables["lake/orders"]).toMatchObject({ namespace: ["sales"], table: "orders" });
    expect(() => settingsFromContext((key) => ({ ...base, "lakewarden:restCatalogTables": "lake/orders=sales.orders" })[key])).toThrow(
      /restCatalogTables: lake\/orders=sales.orders is not valid JSON/,
    );
  });
});
