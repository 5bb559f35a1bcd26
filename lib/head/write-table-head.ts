/**
 * Writes a table's head for one version (default: the latest): what the commit Lambda and
 * `lakewarden head write` call. Reads the stored head whole first: its version decides
 * whether anything needs doing (no manifest read when a newer head is there), its ETag
 * makes the first conditional PUT, its footers and version records are reused.
 */
import { assertTableRoot } from "../formats/table-root.ts";
import type { DataFileFooter, DataFileFooterReader } from "../formats/data-file-footer.ts";
import { noVersionError } from "../formats/errors.ts";
import { findFormat, pinFormat, registeredFormat } from "../formats/index.ts";
import type { TableFormat, VersionFile } from "../formats/table-format.ts";
import type { ObjectStore } from "../store/object-store.ts";
import { buildHead } from "./builder.ts";
import { checkpointBoundary } from "./checkpoint-boundary.ts";
import { putHeadConditionally } from "./conditional-put.ts";
import type { ConditionalWriteOptions, HeadWriteResult } from "./conditional-put.ts";
import { headDescribesFile } from "./content.ts";
import { collectRecentVersions } from "./recent-versions.ts";
import { resolveHeadSettings } from "./settings.ts";
import type { HeadSettingOverrides } from "./settings.ts";
import { UnsupportedHeadError } from "./errors.ts";
import { readStoredHead } from "./stored-head.ts";

export interface WriteTableHeadOptions extends HeadSettingOverrides, ConditionalWriteOptions {
  format?: TableFormat;
  /** The version to write a head for (default: the latest). */
  version?: number;
  /** The newest checkpoint's last version (default: from checkpoint names: a few HEADs from the previous head's, else one LIST). */
  checkpointVersion?: number | null;
  /** Footer reader (default: the format's; null: no footers). */
  footerReader?: DataFileFooterReader | null;
  /** At most this many data-file footer reads per head (default 64). */
  maxFooterReads?: number;
  /** Header version to write: 2 (sectioned, default) or 1 (the layout written before; kept for tests of mixed heads). */
  headerVersion?: 1 | 2;
  now?: () => number;
}

export interface WriteTableHeadResult extends HeadWriteResult {
  /** Why the previous head could not be reused (it is replaced all the same), if it could not. */
  previousHeadProblem: string | null;
  /** Details of the head built; null when skipped before building. */
  built: {
    codec: string;
    compression: string;
    mandatoryBytes: number;
    footerBytes: number;
    footers: number;
    footersOmitted: number;
    footersRead: number;
    footerProblem: string | null;
    recentVersions: number;
    manifestsRead: number;
  } | null;
}

export async function writeTableHead(store: ObjectStore, options: WriteTableHeadOptions = {}): Promise<WriteTableHeadResult> {
  // Without a format, the stored head names it (read first, at no extra request), else the pin or detection.
  const storedFirst = options.format ? null : await readStoredHead(store);
  const named = storedFirst?.state === "readable" ? registeredFormat(storedFirst.content.format) : undefined;
  const resolved = options.format ? { format: options.format, source: "named" as const } : named ? { format: named, source: "pinned" as const } : await findFormat(store);
  const format = resolved.format;
  await assertTableRoot(store, format, "a table has one head, at its root");
  const [stored, target] = await Promise.all([storedFirst ?? readStoredHead(store), targetVersionFile(store, format, options.version)]);
  // Pinned once the table has shown a version to write for: a table the format refuses to read is left untouched.
  if (resolved.source === "detected") await pinFormat(store, format);
  const previous = stored.state === "readable" ? stored.content : null;
  const previousHeadProblem = stored.state === "unreadable" ? stored.problem : null;
  const probe = stored.state === "missing" ? null : stored.probe;

  // A head of this version that is wrong is replaced, not kept until the next commit: one of
  // another version file (table recreated), or a corrupt one. One this reader cannot read
  // because it is newer (unknown codec, header version) is left alone.
  const mismatched = previous !== null && previous.tableVersion === target.version && !headDescribesFile(previous, target, format.name);
  const corrupt = stored.state === "unreadable" && stored.probe.tableVersion === target.version && !(stored.error instanceof UnsupportedHeadError);
  const replaceable = mismatched || corrupt;
  // A newer head, or this version already (in the codec asked for, if one was): no manifest read.
  const early = replaceable ? null : earlySkip(probe?.tableVersion ?? null, probe?.header?.codec ?? null, target.version, options.codec);
  if (early) {
    return {
      action: early,
      version: target.version,
      storedVersion: probe?.tableVersion ?? null,
      etag: probe?.etag ?? null,
      attempts: 0,
      lostRaces: 0,
      bytes: 0,
      previousHeadProblem,
      built: null,
    };
  }

  // The checkpoint boundary (from the previous head's, a few HEADs) while the manifest is read.
  const sameTable = previous !== null && previous.format === format.name;
  // The previous head's snapshot lets the format skip files it shows unchanged (Iceberg: manifests).
  const [snapshot, checkpointVersion] = await Promise.all([
    format.readSnapshot(store, target, sameTable ? { previous: previous.snapshot } : {}),
    options.checkpointVersion !== undefined
      ? options.checkpointVersion
      : checkpointBoundary(store, target.version, sameTable ? { version: previous.tableVersion, checkpoint: previous.recentVersions.after } : null),
  ]);
  const settings = resolveHeadSettings(snapshot, store.uriOf(target.key), options);
  const { recent, manifestsRead } = await collectRecentVersions({ store, format, snapshot, after: checkpointVersion, previous });
  const footerReader = options.footerReader === undefined ? format.readDataFileFooter : options.footerReader;
  const built = await buildHead({
    formatName: format.name,
    snapshot,
    recentVersions: recent,
    codec: settings.codec,
    inlineBudgetBytes: settings.inlineBudgetBytes,
    compression: settings.compression,
    ...(options.headerVersion ? { headerVersion: options.headerVersion } : {}),
    uri: store.uriOf(target.key),
    ...(options.now ? { now: options.now } : {}),
    ...(footerReader ? { footers: { store, read: footerReader, known: knownFooters(previous?.footers), maxReads: options.maxFooterReads ?? 64 } } : {}),
  });
  const written = await putHeadConditionally(
    store,
    {
      bytes: built.bytes,
      version: built.content.tableVersion,
      codec: built.header.codec,
      ...(replaceable && probe ? { replaceSameVersionEtag: probe.etag } : {}),
    },
    options,
    probe,
  );
  return {
    ...written,
    previousHeadProblem,
    built: {
      codec: built.header.codec,
      compression: built.header.compression,
      mandatoryBytes: built.mandatoryBytes,
      footerBytes: built.footerBytes,
      footers: built.content.footers.length,
      footersOmitted: built.content.footersOmitted,
      footersRead: built.footersRead,
      footerProblem: built.footerProblem,
      recentVersions: recent.records.length,
      manifestsRead,
    },
  };
}

function earlySkip(storedVersion: number | null, storedCodec: string | null, version: number, requestedCodec: HeadSettingOverrides["codec"]): HeadWriteResult["action"] | null {
  if (storedVersion === null || storedVersion < version) return null;
  if (storedVersion > version) return "skipped-newer-present";
  const requested = typeof requestedCodec === "string" ? requestedCodec : requestedCodec?.name;
  return requested === undefined || requested === storedCodec ? "skipped-same-version" : null;
}

async function targetVersionFile(store: ObjectStore, format: TableFormat, version: number | undefined): Promise<VersionFile> {
  if (version !== undefined) return format.findVersionFile(store, version);
  const latest = await format.latestVersionFile(store);
  if (!latest) throw await noVersionError(store, format);
  return latest;
}

function knownFooters(footers: readonly DataFileFooter[] | undefined): Map<string, DataFileFooter> {
  return new Map((footers ?? []).map((footer) => [footer.path, footer]));
}
