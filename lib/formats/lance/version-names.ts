/**
 * Version file names under `_versions/` (lance.md §1):
 * - V1: `{version}.manifest`, decimal, unpadded (`12.manifest`);
 * - V2: `{u64::MAX - version}` zero-padded to 20 digits (`18446744073709551614.manifest` is
 *   version 1), so a lexicographic listing returns the newest version first;
 * - detached `d{…}.manifest`: not part of history, skipped;
 * - anything else (`N.manifest-{uuid}` staging files, `.tmp*`, `latest_version_hint.json`)
 *   is not a version file.
 */
export const VERSIONS_PREFIX = "_versions/";

export type ManifestNaming = "v1" | "v2";

const U64_MAX = (1n << 64n) - 1n;
const V2_DIGITS = 20;
const V1_NAME = /^(\d+)\.manifest$/;
const V2_NAME = /^(\d{20})\.manifest$/;

export interface ParsedVersionName {
  version: number;
  naming: ManifestNaming;
}

/**
 * Parses a file name (no folder). Null for names that are not version files, and for
 * numbers no real table can reach (beyond 2^53 - 1 versions), which only a foreign or
 * damaged file could carry.
 */
export function parseVersionName(name: string): ParsedVersionName | null {
  // Lance's own rule: exactly 20 digits + ".manifest" is V2, even though it also matches V1.
  const v2 = V2_NAME.exec(name);
  if (v2) {
    const inverted = BigInt(v2[1]!);
    if (inverted > U64_MAX) return null;
    const version = U64_MAX - inverted;
    return version <= BigInt(Number.MAX_SAFE_INTEGER) ? { version: Number(version), naming: "v2" } : null;
  }
  const v1 = V1_NAME.exec(name);
  if (v1) {
    const version = BigInt(v1[1]!);
    return version <= BigInt(Number.MAX_SAFE_INTEGER) ? { version: Number(version), naming: "v1" } : null;
  }
  return null;
}

/** The file name of `version` in the given naming scheme. */
export function versionFileName(version: number, naming: ManifestNaming): string {
  if (!Number.isSafeInteger(version) || version < 0) {
    throw new RangeError(`not a valid table version: ${version}`);
  }
  if (naming === "v1") return `${version}.manifest`;
  return `${(U64_MAX - BigInt(version)).toString().padStart(V2_DIGITS, "0")}.manifest`;
}

/** Parses a key relative to the table root (`_versions/{name}`); null if it is not a version file. */
export function parseVersionKey(key: string): ParsedVersionName | null {
  if (!key.startsWith(VERSIONS_PREFIX)) return null;
  const name = key.slice(VERSIONS_PREFIX.length);
  return name.includes("/") ? null : parseVersionName(name);
}

export function versionKey(version: number, naming: ManifestNaming): string {
  return VERSIONS_PREFIX + versionFileName(version, naming);
}
