/**
 * Stage `process_manifests`: read every version file, resolve the run's policy from the table
 * config, decide which versions go, and index the files kept and removed versions reference.
 *
 * The read half (`scanManifests`) is incremental: re-planning reads only version files it has
 * not read yet. The decide half (`decideManifests`) is pure. A version file that cannot be read
 * aborts the run: without it we cannot know which files it needs.
 */
import type { CleanupView, FileReference, FormatRemovalRules, KeptTogether, Refs, TableFormat, UnresolvedReference, VersionFile } from "../formats/table-format.ts";
import { NotFoundError } from "../store/errors.ts";
import { UnresolvableReferenceError } from "../formats/errors.ts";
import type { ObjectStore } from "../store/object-store.ts";
import type { VersionRecord } from "../model/version-record.ts";
import { mapWithinBytes } from "./map-within-bytes.ts";
import type { CleanupSettings, RetentionPolicy } from "./policy.ts";
import { resolvePolicy } from "./policy.ts";
import type { CleanupProgress } from "./progress.ts";
import { ReferenceSet } from "./references.ts";
import type { VersionDecision, VersionPin, VersionPlan } from "./version-plan.ts";
import { planVersions } from "./version-plan.ts";
import { removalSteps } from "./removal-steps.ts";
import { ReferenceTable } from "./version-references.ts";
import type { VersionReferences } from "./version-references.ts";

export const DEFAULT_MANIFEST_CONCURRENCY = 16;
/**
 * The most bytes of version files read at once (by their listed sizes). Small files (most
 * version files) run DEFAULT_MANIFEST_CONCURRENCY at a time as before; big ones fewer, as their
 * bodies and decoding are what a scan's peak memory is made of (bench/results/scale-cleanup.md:
 * 512 versions × 100,000 fragments, ~9 MB a version file).
 */
export const MANIFEST_BYTES_IN_FLIGHT = 16 * 1024 * 1024;

export interface ScannedVersion {
  file: VersionFile;
  record: VersionRecord;
  /** The files it names, held once per file across the scan (version-references.ts). */
  references: VersionReferences;
  /** Paths the version names that are not keys under the root. */
  unresolved: UnresolvedReference[];
  config: Record<string, string>;
  /** 0 for the first scan of the run, then 1, 2... for re-plans. */
  round: number;
}

/** Every version read so far, by version. */
export type ManifestScan = Map<number, ScannedVersion>;

export interface ScanOptions {
  concurrency?: number;
  /** What earlier rounds read; only new version files are read, vanished ones are dropped. */
  previous?: ManifestScan;
  /**
   * `previous` is what an earlier, budget-stopped run of the same chain read (run-progress.ts):
   * it counts as this run's first scan (round 0), not as a re-plan.
   */
  resumed?: boolean;
  /** Checked before each version file is read: true → no new read starts, the scan is partial. */
  shouldStop?: () => boolean;
  progress?: CleanupProgress;
}

/** How far a scan got: `complete` false when `shouldStop` cut it short (the map holds what was read). */
export interface ScanCoverage {
  complete: boolean;
  /** Version files listed, and how many of them the scan holds. */
  listed: number;
  held: number;
}

export async function scanManifests(store: ObjectStore, format: TableFormat, options: ScanOptions = {}): Promise<ManifestScan> {
  return (await readManifests(store, format, options)).scan;
}

/** scanManifests, with how far it got. */
export async function readManifests(store: ObjectStore, format: TableFormat, options: ScanOptions = {}): Promise<{ scan: ManifestScan; coverage: ScanCoverage }> {
  const listed = await format.listVersionFiles(store);
  const previous = options.previous ?? new Map<number, ScannedVersion>();
  // A loop, not Math.max(...spread): a table can have more versions than a call has room for arguments.
  let round = 0;
  if (!options.resumed) for (const version of previous.values()) round = Math.max(round, version.round + 1);
  const scan: ManifestScan = new Map();
  const toRead: VersionFile[] = [];
  // One table for the whole chain of scans, so a re-plan's or a resumed run's versions share the files read before.
  const table = previous.values().next().value?.references.table ?? new ReferenceTable();
  for (const file of listed) {
    const known = previous.get(file.version);
    if (known && known.file.key === file.key) scan.set(file.version, options.resumed ? { ...known, round: 0 } : known);
    else toRead.push(file);
  }
  let stopped = false;
  options.progress?.stage("reading manifests", toRead.length);
  // What the reads of this scan share (readForCleanup's `scan`): let go with the scan, not held by the store for the run.
  const reads = {};
  const bounds = { concurrency: options.concurrency ?? DEFAULT_MANIFEST_CONCURRENCY, bytes: MANIFEST_BYTES_IN_FLIGHT, sizeOf: (file: VersionFile) => file.size };
  const read = await mapWithinBytes(toRead, bounds, async (listedFile) => {
    if (stopped || options.shouldStop?.()) {
      stopped = true;
      return null;
    }
    const found = await readListedVersion(store, format, listedFile, reads);
    options.progress?.advance(1);
    if (found === null) return null;
    const { file, view } = found;
    const references = view.referenceSequence ? table.encodeSequence(view.referenceSequence) : table.encode(view.referencedFiles);
    return { file, record: view.record, references, unresolved: view.unresolvedReferences, config: view.config, round };
  });
  table.endScan();
  for (const version of read) if (version !== null) scan.set(version.file.version, version);
  const sorted: ManifestScan = new Map([...scan.entries()].sort((a, b) => a[0] - b[0]));
  return { scan: sorted, coverage: { complete: !stopped, listed: listed.length, held: sorted.size } };
}

/**
 * Reads a listed version file. A file gone since the listing was renamed (a format's migration
 * to a new naming scheme copies version files to new names and deletes the old ones) or
 * removed: the version is looked up again, and dropped only when it has no commit file at all
 * any more.
 */
async function readListedVersion(store: ObjectStore, format: TableFormat, listed: VersionFile, scan: object): Promise<{ file: VersionFile; view: CleanupView } | null> {
  const read = (file: VersionFile) => format.readForCleanup(store, file, scan);
  try {
    return { file: listed, view: await read(listed) };
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
  let current: VersionFile;
  try {
    current = await format.findVersionFile(store, listed.version);
    return { file: current, view: await read(current) };
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}

export interface ProcessedManifests {
  scan: ManifestScan;
  policy: RetentionPolicy;
  plan: VersionPlan;
  decisions: Map<number, VersionDecision>;
  /** Files of kept versions: never deleted. */
  kept: ReferenceSet;
  /** Files of removed versions: proof that a young unreferenced file was committed. */
  removed: ReferenceSet;
  latestAtStart: number;
  refs: Refs;
  /** The reader pins the decisions honoured (re-plans keep them). */
  pins: readonly VersionPin[];
  /** Versions interrupted runs removed, as given (re-plans keep them). */
  removedEarlier: readonly number[];
  /** Set when the run's budget stopped the scan: how far it got. The decisions then cover only what was read, and must not be acted on. */
  scanStopped?: ScanCoverage;
  /** Set when the format planned the removal (format-removal.ts): the files it keeps per kept version, which the post-delete check looks for. */
  keptByFormat?: ReadonlyMap<number, readonly FileReference[]>;
}

export interface DecideInput {
  policy: RetentionPolicy;
  refs: Refs;
  latestAtStart: number;
  nowMillis: number;
  /** The format's rule for removed versions a kept version still needs to be read (its removal strategy's keptTogether). */
  keptTogether?: KeptTogether;
  /** Reader pins that hold (pins.ts readPins(...).active). */
  pins?: readonly VersionPin[];
  /** Versions interrupted runs removed (their intents, or the protection state they left): see planVersions. */
  removedEarlier?: readonly number[];
  /** The format's own retention rules, computed on the scanned version files (its removal strategy's rules). */
  formatRules?: FormatRemovalRules;
}

export function decideManifests(scan: ManifestScan, input: DecideInput): ProcessedManifests {
  const plan = planVersions({
    versions: [...scan.values()].map((v) => ({ version: v.file.version, timestampMillis: v.record.timestamp_millis })),
    latestAtStart: input.latestAtStart,
    refs: input.refs,
    policy: input.policy,
    nowMillis: input.nowMillis,
    ...(input.keptTogether ? { keptTogether: input.keptTogether } : {}),
    ...(input.pins ? { pins: input.pins } : {}),
    ...(input.removedEarlier ? { removedEarlier: input.removedEarlier.filter((version) => !scan.has(version)) } : {}),
    ...(input.formatRules ? { formatRules: input.formatRules } : {}),
  });
  const decisions = new Map(plan.decisions.map((d) => [d.version, d]));
  const kept = new ReferenceSet();
  const removed = new ReferenceSet();
  for (const [version, scanned] of scan) {
    (decisions.get(version)?.keep ? kept : removed).addAll(version, scanned.references, scanned.unresolved);
  }
  return {
    scan,
    policy: input.policy,
    plan,
    decisions,
    kept,
    removed,
    latestAtStart: input.latestAtStart,
    refs: input.refs,
    pins: input.pins ?? [],
    removedEarlier: input.removedEarlier ?? [],
  };
}

export interface ProcessManifestsInput {
  /** The caller's explicit settings, above every other source. Ignored when `policy` is given. */
  settings?: CleanupSettings;
  /** Settings from the environment: below `settings`, above the table's config. */
  environment?: CleanupSettings;
  /** An already resolved policy (re-plans keep the run's policy). */
  policy?: RetentionPolicy;
  /** lakewarden's stored config for the table (`_lakewarden/config`): below the table's own config. */
  storedConfig?: Record<string, string>;
  /** Versions interrupted runs removed (for history protection after a crash). */
  removedEarlier?: readonly number[];
  refs: Refs;
  /** Reader pins that hold (pins.ts readPins(...).active). */
  pins?: readonly VersionPin[];
  latestAtStart: number;
  now: Date;
  concurrency?: number;
  previous?: ManifestScan;
  /** `previous` comes from a budget-stopped run's saved progress (see ScanOptions). */
  resumed?: boolean;
  /** Stops the scan between version files (the run's budget); see `scanComplete`. */
  shouldStop?: () => boolean;
  progress?: CleanupProgress;
}

export async function processManifests(store: ObjectStore, format: TableFormat, input: ProcessManifestsInput): Promise<ProcessedManifests> {
  const { scan, coverage } = await readManifests(store, format, {
    ...(input.concurrency !== undefined ? { concurrency: input.concurrency } : {}),
    ...(input.previous ? { previous: input.previous } : {}),
    ...(input.resumed ? { resumed: true } : {}),
    ...(input.shouldStop ? { shouldStop: input.shouldStop } : {}),
    ...(input.progress ? { progress: input.progress } : {}),
  });
  const config = configAtStart(scan, input.latestAtStart);
  const declared = format.declaredRetention(config, store.uri);
  const policy =
    input.policy ??
    resolvePolicy(
      input.settings ?? {},
      config,
      store.uri,
      input.storedConfig,
      { settings: declared, sources: declared.sources },
      {
        ...(input.environment ? { environment: input.environment } : {}),
      },
    );
  // Asked on the same version file the scan read, so the rules and the references agree.
  const base = scan.get(input.latestAtStart)?.file ?? [...scan.values()].at(-1)?.file;
  const steps = removalSteps(format.removal);
  const formatRules = steps.rules && base ? await steps.rules(store, base, input.now) : undefined;
  const processed = decideManifests(scan, {
    ...(formatRules ? { formatRules } : {}),
    policy,
    refs: input.refs,
    latestAtStart: input.latestAtStart,
    nowMillis: input.now.getTime(),
    ...(steps.keptTogether ? { keptTogether: steps.keptTogether } : {}),
    ...(input.pins ? { pins: input.pins } : {}),
    ...(input.removedEarlier ? { removedEarlier: input.removedEarlier } : {}),
  });
  // A partial scan's decisions are not a plan: nothing may be deleted on them.
  return coverage.complete ? processed : { ...processed, scanStopped: coverage };
}

/**
 * Fail closed: a kept version that names a path which is neither a key under the root nor
 * proven to lie outside it could need any file; deleting anything could break it.
 */
export function assertKeptReferencesResolvable(processed: ProcessedManifests, uri: string): void {
  const unresolvable = processed.kept.unresolvable();
  if (unresolvable.length === 0) return;
  const shown = unresolvable.slice(0, 3).map((r) => `version ${r.version} names ${JSON.stringify(r.path)} (${r.reason})`);
  const more = unresolvable.length > shown.length ? `; and ${unresolvable.length - shown.length} more` : "";
  throw new UnresolvableReferenceError(uri, `cleanup stopped before deleting anything: ${shown.join("; ")}${more}`);
}

/** The table config as of the latest version when the run started (or the newest read). */
function configAtStart(scan: ManifestScan, latestAtStart: number): Record<string, string> {
  const atStart = scan.get(latestAtStart) ?? [...scan.values()].filter((v) => v.file.version <= latestAtStart).at(-1);
  return (atStart ?? [...scan.values()].at(-1))?.config ?? {};
}

/** Records of the versions this plan removes, for the intent journal and the checkpoint. */
export function removedRecords(processed: ProcessedManifests): VersionRecord[] {
  return processed.plan.removed.map((version) => processed.scan.get(version)!.record);
}
