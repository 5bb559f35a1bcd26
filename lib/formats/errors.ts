/**
 * Errors about a table's content (as opposed to StoreError, about reaching it).
 * Each names the object (`uri`) and the problem in one line.
 */
import type { TableFormat } from "./table-format.ts";

export class TableFormatError extends Error {
  readonly uri: string;
  constructor(uri: string, problem: string, options?: { cause?: unknown }) {
    super(`${uri}: ${problem}`, options);
    this.name = new.target.name;
    this.uri = uri;
  }
}

/** The bytes are not a valid commit file (truncated, wrong magic, undecodable protobuf, ...). */
export class CorruptFileError extends TableFormatError {}

/** The table uses a feature this reader does not know; reading on could give wrong answers. */
export class UnsupportedFeatureError extends TableFormatError {}

/**
 * The table itself says maintenance may not delete its files (Iceberg's `gc.enabled=false`): not
 * a fault of the table or of the run, so a scheduled run leaves the table alone with one line and
 * acknowledges the request instead of failing it (a retry would be refused the same way).
 */
export class MaintenanceOptOutError extends UnsupportedFeatureError {}

/** The location holds no table of this format (no version files). */
export class NotATableError extends TableFormatError {}

/** The location is the folder of one of a table's branches, not a table's root (whose refs say what the branch needs). */
export class BranchLocationError extends TableFormatError {}

/** The location holds no version file of `format`: what every reader says about a folder that is not a table. */
export function noVersionFilesError(uri: string, format: Pick<TableFormat, "name" | "versionsPrefix">): NotATableError {
  return new NotATableError(uri, `not ${/^[aeiou]/.test(format.name) ? "an" : "a"} ${format.name} table: no version files under ${format.versionsPrefix}`);
}

/** The location looks like more than one format at once; the caller must say which. */
export class AmbiguousFormatError extends TableFormatError {}

/** A kept version names a path that is neither a key under the table root nor proven outside it. */
export class UnresolvableReferenceError extends TableFormatError {}

/**
 * A catalog's entry for a table cannot be used to clean it (not a format lakewarden reads from a
 * catalog, no pointer, a pointer outside the table root). `uri` is the entry's label.
 */
export class CatalogTableError extends TableFormatError {}

/**
 * A removal commit through a table's catalog that did not go through: `conflict` (the entry moved:
 * re-plan on the new one), `unknown` (no answer: it may have applied; read the table back next run)
 * or `unconfirmed` (accepted, but a fresh load does not show it). Nothing was deleted. `uri`: the
 * entry's label.
 */
export class CatalogCommitError extends TableFormatError {
  readonly outcome: "conflict" | "unknown" | "unconfirmed";
  constructor(label: string, outcome: "conflict" | "unknown" | "unconfirmed", problem: string, options?: { cause?: unknown }) {
    super(label, problem, options);
    this.outcome = outcome;
  }
}
