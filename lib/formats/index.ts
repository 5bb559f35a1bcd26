/**
 * The format registry: which TableFormat a table location holds. Everything above
 * `lib/formats/` asks here; nothing above names a format.
 *
 * A location is detected once: every format looks (one LIST each, in parallel), and the answer
 * is pinned in `_lakewarden/format` so later reads (resolveFormat) read one small object instead.
 * A location that looks like two formats at once (a Delta log with Iceberg metadata beside it) is
 * an error that names both, unless the caller says which, or one format explains the other's
 * files as its own (Delta UniForm writes Iceberg metadata under `metadata/`).
 *
 * What deletes files (findFormat: cleanup, storage, the head writer) re-checks a pin against what
 * the folder holds now: a pinned format that no longer detects, or a folder that now also looks
 * like another format the pinned one does not explain, is one error, so nothing is deleted by
 * rules of a format the table is no longer, or not only.
 */
import type { ObjectStore } from "../store/object-store.ts";
import { NotFoundError } from "../store/errors.ts";
import { FORMAT_PIN_KEY } from "../model/layout.ts";
import type { TableFormat } from "./table-format.ts";
import { AmbiguousFormatError, NotATableError, TableFormatError } from "./errors.ts";
import { deltaFormat } from "./delta/delta-format.ts";
import { icebergFormat } from "./iceberg/iceberg-format.ts";
import { lanceFormat } from "./lance/lance-format.ts";

export const TABLE_FORMATS: readonly TableFormat[] = [lanceFormat, icebergFormat, deltaFormat];

export function formatNames(): string[] {
  return TABLE_FORMATS.map((f) => f.name);
}

/** The format registered under `name`, or undefined (a head or pin naming a format this build lacks). */
/** The one registered format the location's name suggests, if exactly one does (a guess, to read early: never a decision). */
export function suggestedFormat(uri: string): TableFormat | undefined {
  const suggested = TABLE_FORMATS.filter((format) => format.locationSuggests(uri));
  return suggested.length === 1 ? suggested[0] : undefined;
}

export function registeredFormat(name: string): TableFormat | undefined {
  return TABLE_FORMATS.find((format) => format.name === name);
}

/** The format registered under `name`; throws for an unknown name, listing the known ones. */
export function formatByName(name: string): TableFormat {
  const format = registeredFormat(name);
  if (!format) {
    throw new UnknownFormatError(`unknown table format "${name}" (known: ${formatNames().join(", ")})`);
  }
  return format;
}

export class UnknownFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnknownFormatError";
  }
}

export interface ResolveFormatOptions {
  /** The caller's word (`--format`): no detection, and it wins over a pin. */
  name?: string;
}

export interface ResolvedFormat {
  format: TableFormat;
  /** named: the caller's word; pinned: read from `_lakewarden/format`; detected: just now (worth pinning). */
  source: "named" | "pinned" | "detected";
}

/**
 * The table's format: the caller's choice, else the pinned one re-checked against what the folder
 * holds now, else detected. Writes nothing: maintenance pins a detected format once it knows the
 * location is a table's root (`pinFormat`). NotATableError when no format recognises the
 * location; AmbiguousFormatError when more than one does (and none explains the others), or when
 * the pinned one no longer does or now has company it does not explain.
 */
export async function findFormat(store: ObjectStore, options: ResolveFormatOptions = {}): Promise<ResolvedFormat> {
  if (options.name !== undefined) return { format: formatByName(options.name), source: "named" };
  const [pinned, found] = await Promise.all([readPinnedFormat(store), detectedFormats(store)]);
  if (pinned === null) return { format: await oneFormat(store, found), source: "detected" };
  const others = found.filter((format) => format !== pinned);
  const pin = store.uriOf(FORMAT_PIN_KEY);
  const choose = `say which with --format ${[pinned, ...others].map((f) => f.name).join("|")}, or delete ${FORMAT_PIN_KEY} to detect again`;
  if (!found.includes(pinned)) {
    throw others.length === 0
      ? new NotATableError(pin, `pins ${pinned.name}, but the folder holds no ${pinned.name} version files under ${pinned.versionsPrefix} now`)
      : new AmbiguousFormatError(
          pin,
          `pins ${pinned.name}, but the folder holds no ${pinned.name} version files under ${pinned.versionsPrefix} now and looks like ${describe(others)}; ${choose}`,
        );
  }
  const unexplained = await unexplainedBy(store, pinned, others);
  if (unexplained.length > 0) throw new AmbiguousFormatError(pin, `pins ${pinned.name}, but the folder now also looks like ${describe(unexplained)}; ${choose}`);
  return { format: pinned, source: "pinned" };
}

/** The pinned format, else detected: for reading, where a pin is trusted as it is (one small GET). */
export async function resolveFormat(store: ObjectStore, options: ResolveFormatOptions = {}): Promise<TableFormat> {
  if (options.name !== undefined) return formatByName(options.name);
  return (await readPinnedFormat(store)) ?? (await detectFormat(store));
}

/** Every format looks at once (one LIST each); exactly one must recognise the location, or explain the others. */
export async function detectFormat(store: ObjectStore): Promise<TableFormat> {
  return oneFormat(store, await detectedFormats(store));
}

async function detectedFormats(store: ObjectStore): Promise<TableFormat[]> {
  const seen = await Promise.all(TABLE_FORMATS.map(async (format) => ((await format.detect(store)) ? format : null)));
  return seen.filter((format): format is TableFormat => format !== null);
}

function describe(formats: readonly TableFormat[]): string {
  return formats.map((f) => `${/^[aeiou]/.test(f.name) ? "an" : "a"} ${f.name} table (${f.versionsPrefix})`).join(" and ");
}

/** Of `others`, the formats whose files `format` does not write itself. */
async function unexplainedBy(store: ObjectStore, format: TableFormat, others: readonly TableFormat[]): Promise<TableFormat[]> {
  if (others.length === 0) return [];
  const alongside = new Set(await format.formatsWrittenAlongside(store));
  return others.filter((other) => !alongside.has(other.name));
}

async function oneFormat(store: ObjectStore, found: readonly TableFormat[]): Promise<TableFormat> {
  if (found.length === 1) return found[0]!;
  if (found.length > 1) {
    for (const format of found) {
      if (
        (
          await unexplainedBy(
            store,
            format,
            found.filter((f) => f !== format),
          )
        ).length === 0
      )
        return format;
    }
    throw new AmbiguousFormatError(store.uri, `looks like ${describe(found)} at once; say which with --format ${found.map((f) => f.name).join("|")}`);
  }
  const expected = TABLE_FORMATS.map((f) => `${f.versionsPrefix} (${f.name})`).join(", ");
  throw new NotATableError(store.uri, `not a table: no version files under ${expected}`);
}

async function readPinnedFormat(store: ObjectStore): Promise<TableFormat | null> {
  let text: string;
  try {
    text = new TextDecoder().decode((await store.get(FORMAT_PIN_KEY)).body).trim();
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
  const format = registeredFormat(text);
  if (!format) {
    throw new TableFormatError(
      store.uriOf(FORMAT_PIN_KEY),
      `pins format ${JSON.stringify(text.slice(0, 40))}, which this lakewarden does not know (known: ${formatNames().join(", ")})`,
    );
  }
  return format;
}

/** Create-only: a pin, once written, is never replaced by a detection (delete it to detect again). */
export async function pinFormat(store: ObjectStore, format: TableFormat): Promise<void> {
  try {
    await store.put(FORMAT_PIN_KEY, new TextEncoder().encode(`${format.name}\n`), { ifNoneMatch: "*", contentType: "text/plain" });
  } catch {
    // Another run pinned it first, or the store refused: detection stays correct either way.
  }
}

/** The format and table root of a bucket key that is a commit file of any registered format, or null. */
export function commitOfKey(key: string): { format: TableFormat; tableRoot: string } | null {
  for (const format of TABLE_FORMATS) {
    const tableRoot = format.tableRootOfCommitKey(key);
    if (tableRoot !== null) return { format, tableRoot };
  }
  return null;
}

/**
 * S3 notification filters (prefix, suffix) that cover every registered format's commit files
 * under the given table roots and table prefixes. S3 refuses overlapping filters: under one
 * table root each format's commit folder is its own prefix, so they never overlap; under a
 * shared prefix, suffixes that end one another (`.json`, `.metadata.json`) are folded into the
 * shorter, and the commit handler routes each key to its format.
 */
export function commitNotificationFilters(tableRoots: readonly string[], tablePrefixes: readonly string[]): { prefix: string; suffix: string }[] {
  const filters: { prefix: string; suffix: string }[] = [];
  for (const root of tableRoots) {
    for (const format of TABLE_FORMATS) {
      for (const pattern of format.commitPatterns) filters.push({ prefix: `${root}/${pattern.prefix}`, suffix: pattern.suffix });
    }
  }
  const suffixes = [...new Set(TABLE_FORMATS.flatMap((f) => f.commitPatterns.map((p) => p.suffix)))];
  const folded = suffixes.filter((suffix) => !suffixes.some((other) => other !== suffix && suffix.endsWith(other)));
  for (const prefix of tablePrefixes) for (const suffix of folded) filters.push({ prefix, suffix });
  return filters;
}
