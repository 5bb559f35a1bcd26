import { TableFormatError } from "../formats/errors.ts";

/** A checkpoint file that is not a valid lakewarden checkpoint (truncated, wrong schema, inconsistent rows). */
export class CorruptCheckpointError extends TableFormatError {}
