/**
 * Every key lakewarden writes, relative to a table root, in one place. Everything of ours lives
 * under `_lakewarden/`: the leading underscore keeps Lance cleanup, Delta VACUUM and Iceberg
 * orphan removal away from it, and we never write inside a format's own folders.
 */
export const LAKEWARDEN_PREFIX = "_lakewarden/";
/** The head object: the table's current state in one GET. */
export const HEAD_KEY = `${LAKEWARDEN_PREFIX}head`;
/** The cleanup lease: one cleaner per table at a time. */
export const LEASE_KEY = `${LAKEWARDEN_PREFIX}lease`;
/** Per-run intents and receipts. */
export const RUNS_PREFIX = `${LAKEWARDEN_PREFIX}runs/`;
/**
 * A budget-stopped cleanup's saved progress (the version files it read, the listing up to its
 * cursor, the keys it deleted), so the next run resumes instead of starting over: `progress.json`
 * names the segment files beside it. Removed when a run completes.
 */
export const RUN_PROGRESS_PREFIX = `${RUNS_PREFIX}progress/`;
export const RUN_PROGRESS_KEY = `${RUN_PROGRESS_PREFIX}progress.json`;
/** Version checkpoints, `{version:020}.arrow`. */
export const CHECKPOINTS_PREFIX = `${LAKEWARDEN_PREFIX}checkpoints/`;
/** History rows a checkpoint could no longer hold, `{first:020}-{last:020}.arrow`, never pruned. */
export const ARCHIVE_PREFIX = `${LAKEWARDEN_PREFIX}archive/`;
/** The table's detected format, written once, so later runs need not detect it again. */
export const FORMAT_PIN_KEY = `${LAKEWARDEN_PREFIX}format`;
/** Reader pins, `{id}.json`: a version (and every file it needs) kept until the pin expires. */
export const PINS_PREFIX = `${LAKEWARDEN_PREFIX}pins/`;
/**
 * Checkpoints and archive segments that could not be read, set aside by the writer that met them
 * (`{name}.{time}`), never deleted by lakewarden: a repaired file there has its rows merged back.
 */
export const DAMAGED_PREFIX = `${LAKEWARDEN_PREFIX}damaged/`;
