/** Which tables the handlers act on: named tables, tables under prefixes, and (when set) only the table roots IAM names. */
import { describe, expect, it } from "vitest";
import { ConfigurationError } from "../../functions/shared/environment.ts";
import { isInScope, readTableScopes } from "../../functions/shared/table-scopes.ts";

const env = {
  LAKEWARDEN_TABLES: JSON.stringify(["s3://lake/named/kept.lance"]),
  LAKEWARDEN_TABLE_PREFIXES: JSON.stringify(["s3://lake/warehouse"]),
};

describe("table scopes", () => {
  it("without table roots, every non-hidden table under a prefix is in scope", () => {
    const scopes = readTableScopes(env);
    expect(scopes).toEqual({ tables: ["s3://lake/named/kept.lance"], prefixes: ["s3://lake/warehouse/"] });
    expect(isInScope("s3://lake/named/kept.lance", scopes)).toBe(true);
    expect(isInScope("s3://lake/warehouse/eu/sales.lance", scopes)).toBe(true);
    expect(isInScope("s3://lake/warehouse/__manifest", scopes)).toBe(false);
    expect(isInScope("s3://lake/elsewhere/t.lance", scopes)).toBe(false);
  });

  it("with table roots, a table under a prefix is in scope only if listed; named tables stay in scope", () => {
    const scopes = readTableScopes({ ...env, LAKEWARDEN_TABLE_ROOTS: JSON.stringify(["s3://lake/warehouse/eu/sales.lance/"]) });
    expect(scopes.roots).toEqual(["s3://lake/warehouse/eu/sales.lance"]);
    expect(isInScope("s3://lake/warehouse/eu/sales.lance", scopes)).toBe(true);
    expect(isInScope("s3://lake/warehouse/orders.lance", scopes)).toBe(false);
    expect(isInScope("s3://lake/named/kept.lance", scopes)).toBe(true);
    // Listed but outside every prefix: still refused (IAM names it under a prefix only).
    expect(isInScope("s3://lake/elsewhere/t.lance", readTableScopes({ ...env, LAKEWARDEN_TABLE_ROOTS: JSON.stringify(["s3://lake/elsewhere/t.lance"]) }))).toBe(false);
  });

  it("an empty roots list allows no table under the prefixes; a malformed one is a configuration error", () => {
    const scopes = readTableScopes({ ...env, LAKEWARDEN_TABLE_ROOTS: "[]" });
    expect(isInScope("s3://lake/warehouse/orders.lance", scopes)).toBe(false);
    expect(() => readTableScopes({ ...env, LAKEWARDEN_TABLE_ROOTS: "[oops" })).toThrow(ConfigurationError);
  });
});
