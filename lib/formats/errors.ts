/**
 * Errors about a table's content (as opposed to StoreError, about reaching it).
 * Each names the object (`uri`) and the problem in one line.
 */
import type { ObjectStore } from "../store/object-store.ts";
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

/**
 * Only the table's catalog can say which version is current (Iceberg metadata files all named
 * `NNNNN-uuid`: the newest may be a commit the catalog never accepted), and the caller gave no
 * catalog and no pointer: nothing is read past the listing. Asking again gives the same answer
 * until the caller names the catalog, so a Lambda without one for the table acknowledges the
 * request with one line instead of retrying it into the dead-letter queue.
 */
export class CatalogPointerRequiredError extends UnsupportedFeatureError {}

/** The location holds no table of this format (no version files). */
export class NotATableError extends TableFormatError {}

/** The location is the folder of one of a table's branches, not a table's root (whose refs say what the branch needs). */
export class BranchLocationError extends TableFormatError {}

/**
 * The location is a table of the format that has no version yet (an Iceberg table created
 * without a snapshot): nothing to read, nothing to maintain. A scheduled cleanup says so in one
 * line and succeeds; a read (`versions`, `head`) has nothing to show.
 */
export class NoVersionYetError extends NotATableError {}

function article(name: string): string {
  return /^[aeiou]/.test(name) ? "an" : "a";
}

/** The location holds no version file of `format`: what every reader says about a folder that is not a table. */
export function noVersionFilesError(uri: string, format: Pick<TableFormat, "name" | "versionsPrefix">): NotATableError {
  return new NotATableError(uri, `not ${article(format.name)} ${format.name} table: no version files under ${format.versionsPrefix}`);
}

/** What a table of `format` with no version yet is, in one line: "an iceberg table with no snapshot yet: nothing to maintain". */
export function noVersionYetLine(format: Pick<TableFormat, "name" | "versionNoun">): string {
  return `${article(format.name)} ${format.name} table with no ${format.versionNoun} yet: nothing to maintain`;
}

/**
 * Why a location has no latest version: a table of `format` with none yet (the format detects
 * the table: one request, on this path only), or no table at all.
 */
export async function noVersionError(store: ObjectStore, format: Pick<TableFormat, "name" | "versionsPrefix" | "versionNoun" | "detect">): Promise<NotATableError> {
  if (await format.detect(store)) return new NoVersionYetError(store.uri, noVersionYetLine(format));
  return noVersionFilesError(store.uri, format);
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
