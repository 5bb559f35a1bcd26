import { describe, expect, it } from "vitest";
import { parseVersionKey, parseVersionName, versionFileName, versionKey } from "../../../lib/formats/lance/version-names.ts";

describe("Lance version file names", () => {
  it("parses V1 names", () => {
    expect(parseVersionName("1.manifest")).toEqual({ version: 1, naming: "v1" });
    expect(parseVersionName("12.manifest")).toEqual({ version: 12, naming: "v1" });
    expect(parseVersionName("9007199254740991.manifest")).toEqual({ version: Number.MAX_SAFE_INTEGER, naming: "v1" });
  });

  it("parses V2 names as u64::MAX minus the number", () => {
    expect(parseVersionName("18446744073709551614.manifest")).toEqual({ version: 1, naming: "v2" });
    expect(parseVersionName("18446744073709551603.manifest")).toEqual({ version: 12, naming: "v2" });
    expect(parseVersionName("18446744073709551615.manifest")).toEqual({ version: 0, naming: "v2" });
  });

  it("formats both schemes and round-trips", () => {
    expect(versionFileName(1, "v2")).toBe("18446744073709551614.manifest");
    expect(versionFileName(1, "v1")).toBe("1.manifest");
    expect(versionKey(7, "v2")).toBe("_versions/18446744073709551608.manifest");
    for (const version of [0, 1, 9, 10, 99, 100, 123456, Number.MAX_SAFE_INTEGER]) {
      for (const naming of ["v1", "v2"] as const) {
        expect(parseVersionName(versionFileName(version, naming))).toEqual({ version, naming });
      }
    }
    expect(() => versionFileName(-1, "v1")).toThrow(RangeError);
    expect(() => versionFileName(1.5, "v2")).toThrow(RangeError);
  });

  it("sorts V2 names newest first", () => {
    const names = [1, 2, 10, 11, 100].map((v) => versionFileName(v, "v2")).sort();
    expect(names.map((n) => parseVersionName(n)!.version)).toEqual([100, 11, 10, 2, 1]);
  });

  it("ignores detached, staging, temp and other files", () => {
    for (const name of [
      "d9223372036854775809.manifest",
      "3.manifest-6f1c2a7e-0b7e-4c8e-9a59-3f1f9f2a1b2c",
      ".tmp_3.manifest_abc",
      "latest_version_hint.json",
      "manifest",
      ".manifest",
      "x1.manifest",
      "1.manifest.bak",
      "-1.manifest",
    ]) {
      expect(parseVersionName(name), name).toBeNull();
    }
  });

  it("ignores numbers no table can reach", () => {
    // Past 2^53 versions (V1) and inverted names below u64::MAX - 2^53 (V2).
    expect(parseVersionName("9007199254740992.manifest")).toBeNull();
    expect(parseVersionName("00000000000000000000.manifest")).toBeNull();
    expect(parseVersionName("99999999999999999999.manifest")).toBeNull();
  });

  it("parses what BigInt arithmetic gives, at the edges of u64 and of safe integers", () => {
    const U64_MAX = (1n << 64n) - 1n;
    const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
    const byBigInt = (name: string) => {
      const digits = /^(\d+)\.manifest$/.exec(name)![1]!;
      const number = BigInt(digits);
      const version = digits.length === 20 ? U64_MAX - number : number;
      return number > U64_MAX || version < 0n || version > SAFE ? null : { version: Number(version), naming: digits.length === 20 ? "v2" : "v1" };
    };
    const versions = [0n, 1n, 9n, 10n, 9999999999n, 10000000000n, 10000000001n, 3709551615n, 3709551616n, SAFE - 1n, SAFE, SAFE + 1n, SAFE + 10000000000n, U64_MAX - 1n, U64_MAX];
    const names = versions.flatMap((version) => [`${(U64_MAX - version).toString().padStart(20, "0")}.manifest`, `${version}.manifest`]);
    names.push("18446744073709551616.manifest", "20000000000000000000.manifest", "000000000000001.manifest", "0000000000000000012.manifest");
    for (const name of names) expect(parseVersionName(name), name).toEqual(byBigInt(name));
  });

  it("parses keys only directly under _versions/", () => {
    expect(parseVersionKey("_versions/1.manifest")).toEqual({ version: 1, naming: "v1" });
    expect(parseVersionKey("tree/b/_versions/1.manifest")).toBeNull();
    expect(parseVersionKey("_versions/sub/1.manifest")).toBeNull();
    expect(parseVersionKey("1.manifest")).toBeNull();
  });
});
