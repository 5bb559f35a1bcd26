/**
 * The one place the defaulted members of TableFormat (speed-ups, wording, read abilities) get their defaults: each format's module passes its
 * parts through defineFormat, and every caller above calls the member, never a fallback of its
 * own. A default gives the same answer as the member it stands in for, only with more requests
 * or more decoding; nothing that changes what is deleted has a default. A read ability's default
 * (readRows) is a refusal: a format that cannot read its rows says so.
 */
import { mapConcurrent } from "../store/map-concurrent.ts";
import { UnsupportedFeatureError } from "./errors.ts";
import type { FormatParts, ListedVersion, TableFormat, VersionFile } from "./table-format.ts";

/** How many records the default readRecords reads at a time. */
export const DEFAULT_RECORD_CONCURRENCY = 16;

export function defineFormat(parts: FormatParts): TableFormat {
  const format: TableFormat = {
    ...parts,
    versionNoun: parts.versionNoun ?? "version",
    locationSuggests: parts.locationSuggests ?? (() => false),
    listVersionKeys: parts.listVersionKeys ?? (async (store) => (await format.listVersionFiles(store)).map(listedFile)),
    listVersionKeysAndRefs:
      parts.listVersionKeysAndRefs ??
      (async (store) => {
        const [versionKeys, refs] = await Promise.all([format.listVersionKeys(store), format.readRefs(store)]);
        return { versionKeys, refs };
      }),
    startLatestLookup:
      parts.startLatestLookup ??
      ((store) => {
        const latest = format.latestVersionFile(store);
        // Started now, perhaps never awaited (a caller that learns what it needs elsewhere): no unhandled rejection.
        latest.catch(() => undefined);
        return { latest: () => latest, latestFrom: () => latest, settled: () => latest.then(noop, noop) };
      }),
    readRecord: parts.readRecord ?? (async (store, file) => (await format.readSnapshot(store, file)).record),
    readRecords:
      parts.readRecords ?? ((store, files, options = {}) => mapConcurrent([...files], options.concurrency ?? DEFAULT_RECORD_CONCURRENCY, (file) => format.readRecord(store, file))),
    readForCleanup: parts.readForCleanup ?? ((store, file) => format.readSnapshot(store, file)),
    readRows:
      parts.readRows ??
      (async (store, _snapshot, file) => {
        throw new UnsupportedFeatureError(
          store.uriOf(file.paths[0] ?? ""),
          `reading rows of ${parts.name} tables is not supported (lakewarden scan reads Delta and Iceberg tables)`,
        );
      }),
  };
  return format;
}

function noop(): void {}

function listedFile(file: VersionFile): ListedVersion {
  return { version: file.version, key: file.key, file: () => file };
}
