/** The cleanup pipeline's public API: the whole run, its stages, its policy and its report. */
export { runCleanup } from "./run-cleanup.ts";
export type { RunCleanupOptions } from "./run-cleanup.ts";
export { runCheckpoint } from "./run-checkpoint.ts";
export type { CheckpointReport, RunCheckpointOptions } from "./run-checkpoint.ts";
export type { CleanupReport, CleanupStatus, KindTotals, VersionLine } from "./cleanup-report.ts";
export {
  DEFAULT_SETTINGS,
  ENVIRONMENT_KEYS,
  TABLE_CONFIG_KEYS,
  describePolicy,
  parseSetting,
  resolvePolicy,
  settingsFromEnvironment,
} from "./policy.ts";
export type { CleanupSettings, RetentionPolicy } from "./policy.ts";
export { formatDuration, parseDuration } from "./duration.ts";
export { LeaseHeldError, LeaseLostError, PolicyError, TableChangedError } from "./errors.ts";
export { DEFAULT_LEASE_DURATION_MS, LEASE_KEY, Lease, breakLease, inspectLease, leaseState, readLease } from "./lease.ts";
export type { BreakResult, LeaseInspection, LeaseOptions, LeaseRecord, LeaseState } from "./lease.ts";
export { STORED_CONFIG_KEY, readStoredConfig, updateStoredConfig } from "./stored-config.ts";
export { decideManifests, processManifests, scanManifests } from "./process-manifests.ts";
export type { ManifestScan, ProcessedManifests, ScannedVersion } from "./process-manifests.ts";
export { planDeletes } from "./plan-deletes.ts";
export type { DeletePlan, PlanDeletesOptions } from "./plan-deletes.ts";
export { replanUntilSettled } from "./replan.ts";
export type { SettledPlan } from "./replan.ts";
export { deleteUnreferenced } from "./delete-unreferenced.ts";
export type { DeleteUnreferencedOptions, DeletionOutcome } from "./delete-unreferenced.ts";
export { mergeStats, removalStats } from "./stats.ts";
export type { RemovalStats } from "./stats.ts";
export { planVersions } from "./version-plan.ts";
export type { ProtectionOutcome, TaggedOldVersion, VersionDecision, VersionPlan } from "./version-plan.ts";
export { LAKEWARDEN_PREFIX, planFiles } from "./file-plan.ts";
export type { FilePlan, PlannedFile, PlannedKind } from "./file-plan.ts";
export type { CleanupProgress, CleanupStage } from "./progress.ts";
export { RUNS_PREFIX, expiredReceipts, listRunFiles, readIntents } from "./run-files.ts";
export { PINS_PREFIX, createPin, describePin, readPins, releasePin, renewPin } from "../pins/pins.ts";
export type { CreatePinInput, PinRecord, PinsRead } from "../pins/pins.ts";
