/**
 * The catalog seam as a format sees it: a table whose commit pointer a catalog owns (AWS Glue, an
 * Iceberg REST catalog) is loaded from the catalog, and a format's removal commit goes through the
 * catalog, guarded by the entry the plan was made on. lib/catalog/ implements it per catalog; the
 * format says what the commit changes (which parameter holds the pointer, Iceberg's metadata), the
 * catalog only carries it and says whether it was taken.
 *
 * A commit has three outcomes, and cleanup treats each its own way:
 *   - accepted: the catalog took it; files are deleted only once a fresh load shows it;
 *   - conflict: the catalog refused it because the entry moved (another writer committed): the
 *     run re-plans on the new entry, never overwrites it;
 *   - unknown: no answer (a timeout, a 5xx): the commit may or may not have applied; the run stops
 *     with nothing deleted, and the next one reads the table back before deciding.
 */
import type { CatalogTable } from "./table-format.ts";

export type CatalogCommitAnswer =
  /** `pointer`: the new commit pointer, when the catalog wrote the commit itself (REST). */
  { outcome: "accepted"; pointer?: string } | { outcome: "conflict"; reason: string } | { outcome: "unknown"; reason: string };

/** One table in one catalog: loaded fresh on every call, committed to only on top of a loaded entry. */
export interface TableCatalog {
  /** How messages name the table: `Glue table "orders" in database "sales"`. */
  readonly label: string;
  /** The entry as the catalog has it now, with its `version` (Glue's VersionId) when the catalog has one. */
  load(): Promise<CatalogTable>;
  /**
   * A pointer-swap catalog (Glue, Hive): sets these parameters of the entry (the format's new
   * pointer, written create-only before) if and only if the entry is still `base`.
   */
  updateParameters?(base: CatalogTable, changes: Readonly<Record<string, string>>): Promise<CatalogCommitAnswer>;
  /**
   * A catalog that applies changes itself (the Iceberg REST protocol): sends the format's commit
   * request (`body`: JSON text, exact 64-bit ids), whose requirements guard it against `base`
   * having moved; the catalog writes the new metadata and answers with its pointer.
   */
  commitChanges?(base: CatalogTable, body: string): Promise<CatalogCommitAnswer>;
  /**
   * Why another maintenance service looks after the table (S3 Tables' own snapshot management),
   * or null; asked before a cleanup run, which then leaves the table alone with that line.
   */
  maintainedElsewhere?(): Promise<string | null>;
}
