import { TableFormatError } from "../formats/errors.ts";

/** A checkpoint file that is not a valid lakewarden checkpoint (truncated, wrong schema, inconsistent rows). */
export class CorruptCheckpointError extends TableFormatError {}

/**
 * A checkpoint written in a newer format than this reader knows. Not corruption: it may hold
 * history nothing else has, so it is neither skipped past nor replaced, and the run stops.
 */
export class UnsupportedCheckpointError extends TableFormatError {}
