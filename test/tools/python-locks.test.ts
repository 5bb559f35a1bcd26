/**
 * The two Python locks (test/tools/python-env.ts): `npm test` installs requirements.lock only, so
 * Spark with Delta (the peers' extras, about 300 MB) must never be in it; both locks must be made
 * from their current requirements files, or the setup stops.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { assertLocksCurrent, lockedPackages, lockFile, peerLockFile, peerRequirementsFile } from "./python-env.ts";

const pins = (requirements: string): string[] =>
  readFileSync(requirements, "utf8")
    .split("\n")
    .map((line) => line.replace(/#.*/, "").trim())
    .filter(Boolean)
    .map((pin) => pin.split(/[=<>~![; ]/, 1)[0]!.toLowerCase());

describe("the tests' Python locks", () => {
  it("are made from the current requirements files", () => {
    expect(() => assertLocksCurrent()).not.toThrow();
  });

  it("keep the peers' extras out of the lock npm test installs, and in the peers' lock", () => {
    const peers = pins(peerRequirementsFile);
    expect(peers).toEqual(expect.arrayContaining(["pyspark", "delta-spark"]));
    const base = lockedPackages(lockFile);
    expect(peers.filter((name) => base.has(name))).toEqual([]);
    expect(base.has("py4j")).toBe(false);
    const peerLock = lockedPackages(peerLockFile);
    expect(peers.filter((name) => !peerLock.has(name))).toEqual([]);
  });

  it("resolve the peers' lock against the first: a package in both is pinned the same", () => {
    const versions = (lock: string): Map<string, string> =>
      new Map([...readFileSync(lock, "utf8").matchAll(/^([a-z0-9][a-z0-9._-]*)==(\S+)/gm)].map((match) => [match[1]!, match[2]!]));
    const base = versions(lockFile);
    const mismatched = [...versions(peerLockFile)].filter(([name, version]) => base.has(name) && base.get(name) !== version);
    expect(mismatched).toEqual([]);
  });
});
