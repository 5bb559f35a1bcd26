/**
 * Where a table's storage goes: one listing of the table, split into parts that add up to the
 * bytes listed.
 *
 *   live         the latest version's files (and anything committed meanwhile)
 *   history      files only older kept versions need, by why those are kept: retention, tags,
 *                branches, pins, protection (the version decisions' own word, `keptBy`)
 *   reclaimable  exactly what `cleanup` (and `cleanup --dry-run`) would delete now: the same
 *                plan functions on the same policy (processManifests, then the file plan)
 *   unknown      files in the format's folders the format does not know
 *   lakewarden   our own files under `_lakewarden/`
 *   other        the rest: unreferenced files within the safety window, the format's bookkeeping,
 *                files outside the format's folders (e.g. a Lance branch's folder, refs)
 *
 * A file several kept versions share counts once, in the part of the version that holds it
 * longest: live first, then tags, branches, protection, pins, and retention last.
 */
import { loadNewestCheckpoint } from "../checkpoint/load.ts";
import { findFormat } from "../formats/index.ts";
import type { TableFormat } from "../formats/table-format.ts";
import { noVersionFilesError } from "../formats/errors.ts";
import type { ObjectStore } from "../store/object-store.ts";
import { CompactListing } from "../maintenance/listing.ts";
import { planListing } from "../maintenance/plan-deletes.ts";
import { SpillArea } from "../maintenance/spill.ts";
import { readPins } from "../pins/pins.ts";
import type { CleanupSettings } from "../maintenance/policy.ts";
import { describePolicy } from "../maintenance/policy.ts";
import { processManifests } from "../maintenance/process-manifests.ts";
import { admitOrRefuse } from "../maintenance/admission.ts";
import { listRunFiles, readIntents } from "../maintenance/run-files.ts";
import { provenByIntents } from "../maintenance/run-cleanup.ts";
import { readStoredConfig } from "../maintenance/stored-config.ts";
import { add, classify, zero } from "../maintenance/storage-parts.ts";
import type { StorageParts, Totals, VersionHolding } from "../maintenance/storage-parts.ts";

export * from "../maintenance/storage-parts.ts";

export interface StorageReport {
  table: string;
  format: string;
  /** The listing: every object under the table root. */
  listed: Totals;
  parts: StorageParts;
  latest_version: number;
  versions_kept: number;
  versions_reclaimable: number[];
  policy: ReturnType<typeof describePolicy>;
  /** With byVersion: each kept version, oldest first. */
  by_version: VersionHolding[] | null;
  warnings: string[];
}

export interface StorageOptions {
  format?: TableFormat;
  /** The same settings cleanup takes (CLI flags); the table's config overrides them as in cleanup. */
  settings?: CleanupSettings;
  byVersion?: boolean;
  now?: Date;
}

/** The table's storage now, by part; reads like a dry-run cleanup plus one listing of the root. */
export async function measureStorage(store: ObjectStore, options: StorageOptions = {}): Promise<StorageReport> {
  const now = options.now ?? new Date();
  const format = options.format ?? (await findFormat(store)).format;
  // The root's listing and the plan a page at a time, as cleanup holds them (lib/maintenance/spill.ts).
  const spill = SpillArea.open();
  try {
    return await measure(store, format, now, spill, options);
  } finally {
    spill.dispose();
  }
}

async function measure(store: ObjectStore, format: TableFormat, now: Date, spill: SpillArea, options: StorageOptions): Promise<StorageReport> {
  const [latest, refs, runFiles, storedConfig, history, pins, listing] = await Promise.all([
    format.latestVersionFile(store),
    format.readRefs(store),
    listRunFiles(store),
    readStoredConfig(store),
    loadNewestCheckpoint(store),
    readPins(store, now),
    listAll(store, spill),
  ]);
  if (!latest) throw noVersionFilesError(store.uri, format);
  // The gates cleanup runs first: a table cleanup refuses is not measured as if it would clean it.
  await admitOrRefuse(store, format, latest);
  const intents = await readIntents(store, runFiles.intents);
  // The same inputs cleanup's run gives processManifests (run-cleanup.ts), so the plans agree.
  const scanned = await processManifests(store, format, {
    settings: options.settings ?? {},
    storedConfig,
    removedEarlier: [...intents.read.flatMap((intent) => intent.records.map((record) => record.version)), ...(history.checkpoint?.protection?.removed_earlier ?? [])],
    refs,
    pins: pins.active,
    latestAtStart: latest.version,
    now,
  });
  const managed = new CompactListing(spill);
  for (const object of listing) if (format.managedPrefixes.some((prefix) => object.key.startsWith(prefix))) managed.push(object);
  const plan = await planListing(store, { listing: managed }, format, scanned, { now, proven: await provenByIntents(store, intents.read, { ...scanned.policy, now }), spill });
  const processed = plan.processed;
  const { parts, byVersion } = classify(plan, format, listing, Boolean(options.byVersion));
  const listed = zero();
  for (const object of listing) add(listed, object.size);
  return {
    table: store.uri,
    format: format.name,
    listed,
    parts,
    latest_version: processed.plan.decisions.at(-1)?.version ?? latest.version,
    versions_kept: processed.plan.kept.length,
    versions_reclaimable: processed.plan.removed,
    policy: describePolicy(processed.policy, processed.plan.applied),
    by_version: byVersion,
    warnings: [...pins.problems, ...intents.problems],
  };
}

async function listAll(store: ObjectStore, spill: SpillArea): Promise<CompactListing> {
  const out = new CompactListing(spill);
  for await (const object of store.list("")) out.push(object);
  return out;
}
