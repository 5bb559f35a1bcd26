/** What a REST catalog's credentials secret may hold (restAuthFromSecret); every refusal names the secret and never a value from it. */
import { describe, expect, it } from "vitest";
import { restAuthFromSecret } from "../../lib/catalog/catalog-secret.ts";

describe("restAuthFromSecret", () => {
  it("reads OAuth2 client credentials (with scope and token URI when given) or a bearer token", () => {
    expect(restAuthFromSecret("s", JSON.stringify({ clientId: "id", clientSecret: "shh" }))).toEqual({ type: "oauth2", clientId: "id", clientSecret: "shh" });
    expect(restAuthFromSecret("s", JSON.stringify({ clientId: "id", clientSecret: "shh", scope: "PRINCIPAL_ROLE:ALL", tokenUri: "https://idp/token" }))).toEqual({
      type: "oauth2",
      clientId: "id",
      clientSecret: "shh",
      scope: "PRINCIPAL_ROLE:ALL",
      tokenUri: "https://idp/token",
    });
    expect(restAuthFromSecret("s", JSON.stringify({ token: "tok" }))).toEqual({ type: "bearer", token: "tok" });
  });

  it("refuses a value that is not JSON, holds two ways to authenticate or none, naming keys, never values", () => {
    const cases: [string, string][] = [
      [
        "client_id:shh",
        'catalog credentials secret lakewarden/x: its value is not JSON (expected {"clientId": ..., "clientSecret": ...} or {"token": ...}); nothing read, written or deleted',
      ],
      [
        JSON.stringify({ token: "tok", clientId: "id", clientSecret: "shh" }),
        "catalog credentials secret lakewarden/x: it holds both a token and client credentials: keep one way to authenticate; nothing read, written or deleted",
      ],
      [
        JSON.stringify({ clientSecret: "shh" }),
        "catalog credentials secret lakewarden/x: its value has no usable credentials (keys: clientSecret; expected clientId and clientSecret, or token); nothing read, written or deleted",
      ],
      [
        '"shh"',
        "catalog credentials secret lakewarden/x: its value has no usable credentials (keys: none; expected clientId and clientSecret, or token); nothing read, written or deleted",
      ],
    ];
    for (const [value, message] of cases) {
      expect(() => restAuthFromSecret("lakewarden/x", value)).toThrow(message);
      try {
        restAuthFromSecret("lakewarden/x", value);
      } catch (error) {
        expect((error as Error).message).not.toContain("shh");
      }
    }
  });
});
