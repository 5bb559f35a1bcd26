/** What every table command shares: opening the table's store and the `--stats` line. */
import type { Command } from "commander";
import { stat } from "node:fs/promises";
import { NotFoundError } from "../store/errors.ts";
import { parseLocation } from "../store/location.ts";
import { openStore } from "../store/open-store.ts";
import type { ObjectStore } from "../store/object-store.ts";
import type { CliIO } from "./io.ts";
import { formatByName, formatNames, TABLE_FORMATS } from "../formats/index.ts";
import { resolveTablePath } from "../model/table-path.ts";
import type { CatalogTable, TableFormat } from "../formats/table-format.ts";
import { EXIT_CODES_HELP } from "./exit-codes.ts";
import { snakeCaseKeys } from "../maintenance/cleanup-report.ts";
import { UsageError } from "./errors.ts";
import { catalogFlagText, catalogFromFlags, type CatalogFlags } from "./catalog-options.ts";
import type { TableCatalog } from "../formats/catalog-commit.ts";
import { formatAtCatalogPointer } from "../formats/catalog.ts";

export { withCatalogOptions } from "./catalog-options.ts";

export interface OutputOptions extends CatalogFlags {
  json?: boolean;
  stats?: boolean;
  /** `--format`: the caller's word for the table's format; detection otherwise. */
  format?: string;
  /** `--metadata-location`: the commit pointer a catalog owns (Iceberg's current metadata file). */
  metadataLocation?: string;
  /** `--allow-superseded-metadata` (cleanup): clean by `--metadata-location` even when a newer metadata file supersedes it. */
  allowSupersededMetadata?: boolean;
}

const ALLOW_SUPERSEDED_ONLY_WITH_LOCATION =
  "--allow-superseded-metadata applies to --metadata-location only (through --glue-table or --catalog the catalog's pointer is the current metadata, and a removal commit is refused if the entry moved)";

/**
 * formatOption, where `--glue-table` or `--catalog` may name the pointer: the catalog's entry is
 * read now, once, and the format bound to the file it names, exactly as `--metadata-location`
 * binds it.
 */
export async function catalogFormatOption(options: OutputOptions, store: ObjectStore): Promise<{ format?: TableFormat }> {
  const { format, catalog } = await catalogBinding(options, store);
  // Bound to the catalog as cleanup binds it, so a command that plans (storage) makes cleanup's plan:
  // the catalog's word over a newer file it never took. Nothing here commits; the entry is the one just loaded.
  if (catalog) return { format: formatAtCatalogPointer(store, await catalog.load(), { commitThrough: catalog }).format };
  return format ? { format } : {};
}

/** catalogFormatOption with the catalog named, for a command that commits through it (cleanup). */
export async function catalogBinding(options: OutputOptions, store: ObjectStore): Promise<{ format?: TableFormat; catalog?: TableCatalog }> {
  const catalog = catalogFromFlags(options);
  if (catalog === null) return formatOption(options, store);
  if (options.allowSupersededMetadata) throw new UsageError(ALLOW_SUPERSEDED_ONLY_WITH_LOCATION);
  const flag = options.glueTable !== undefined ? "--glue-table" : "--catalog";
  if (options.metadataLocation !== undefined) throw new UsageError(`${flag} and --metadata-location both name the current metadata: give one`);
  const entry = await catalog.load();
  const { format } = formatAtCatalogPointer(store, entry);
  if (options.format !== undefined && options.format !== format.name) {
    throw new UsageError(`--format ${options.format}: ${catalogFlagText(options)} is ${/^[aeiou]/.test(format.name) ? "an" : "a"} ${format.name} table`);
  }
  return { format, catalog: firstLoadServed(catalog, entry) };
}

/**
 * The catalog, its next load answered by the entry just loaded (a command that checked the entry
 * and then runs on it asks the catalog once); every later load goes to the catalog.
 */
function firstLoadServed(catalog: TableCatalog, entry: CatalogTable): TableCatalog {
  let first: CatalogTable | null = entry;
  const load = async (): Promise<CatalogTable> => {
    const served = first;
    first = null;
    return served ?? catalog.load();
  };
  return {
    label: catalog.label,
    load,
    ...(catalog.updateParameters ? { updateParameters: catalog.updateParameters.bind(catalog) } : {}),
    ...(catalog.commitChanges ? { commitChanges: catalog.commitChanges.bind(catalog) } : {}),
    ...(catalog.maintainedElsewhere ? { maintainedElsewhere: catalog.maintainedElsewhere.bind(catalog) } : {}),
  };
}

/** What every table command's `<table>` argument accepts, as --help says it. */
export const TABLE_ARGUMENT_HELP = "table location: a local path, file:// URI or s3://bucket/prefix/table";

/** Adds the flags every table command has. */
export function withOutputOptions(command: Command): Command {
  return command
    .option("--format <name>", `the table's format (${formatNames().join(", ")}); default: detected once`)
    .option("--metadata-location <key-or-uri>", "the current metadata file, when a catalog (REST, Glue) names it")
    .option("--json", "print one JSON document on stdout (snake_case keys)")
    .option("--stats", "end stderr with one JSON line counting the requests made")
    .option("--verbose", "print stack traces with errors")
    .addHelpText("after", `\n${EXIT_CODES_HELP}\n`);
}

/** The `--stats` line of the command running on an output, printed last by runCli. */
const pendingStats = new WeakMap<CliIO, () => string>();

/** The `--stats` line still to print for this output (once), or null. */
export function takeStatsLine(io: CliIO): string | null {
  const line = pendingStats.get(io);
  pendingStats.delete(io);
  return line ? line() : null;
}

/**
 * Opens the table's store and runs the command body. With `--stats`, the request counts are
 * printed as the last line on stderr (by runCli, after warnings and errors), whether the body
 * succeeded or not.
 */
export async function runOnTable<T>(location: string, options: OutputOptions, io: CliIO, body: (store: ObjectStore) => Promise<T>): Promise<T> {
  const store = openStore(location);
  if (options.stats) pendingStats.set(io, () => `${JSON.stringify({ requests: store.stats.snapshot() })}\n`);
  await assertLocalDirectory(location);
  return body(store);
}

/** The caller's `--format` as a TableFormat (undefined: let the library detect it). */
export function chosenFormat(options: OutputOptions, store: ObjectStore): TableFormat | undefined {
  let format: TableFormat | undefined;
  if (options.format !== undefined) {
    try {
      format = formatByName(options.format);
    } catch (error) {
      throw new UsageError(`--format: ${(error as Error).message}`);
    }
  }
  if (options.metadataLocation === undefined) {
    if (options.allowSupersededMetadata) throw new UsageError(ALLOW_SUPERSEDED_ONLY_WITH_LOCATION);
    return format;
  }
  const withPointers = TABLE_FORMATS.filter((f) => f.at !== undefined);
  const base = format ?? (withPointers.length === 1 ? withPointers[0] : undefined);
  if (!base?.at) throw new UsageError(`--metadata-location: ${format ? `a ${format.name} table has no commit pointer a catalog owns` : "say which format with --format"}`);
  const resolved = resolveTablePath(options.metadataLocation, { roots: [store.uri], absolute: true });
  if (resolved.kind !== "key") throw new UsageError(`--metadata-location ${JSON.stringify(options.metadataLocation)}: not a file under the table (${resolved.reason})`);
  return base.at(resolved.key, { allowSuperseded: options.allowSupersededMetadata === true });
}

/** `{ format }` when the caller said `--format`, else `{}` (the library then asks the head, the pin, or detects). */
export function formatOption(options: OutputOptions, store: ObjectStore): { format?: TableFormat } {
  const format = chosenFormat(options, store);
  return format ? { format } : {};
}

/** One JSON document on stdout, keys in snake_case like every JSON lakewarden prints (see snakeCaseKeys). */
export function printJson(io: CliIO, value: unknown): void {
  io.out(`${JSON.stringify(snakeCaseKeys(value), null, 2)}\n`);
}

/**
 * A local location must be an existing directory: a mistyped path would otherwise read as an
 * empty table, or be served as a lake with nothing in it. `purpose` ends the message (" to serve").
 */
export async function assertLocalDirectory(location: string, purpose = ""): Promise<void> {
  const parsed = parseLocation(location);
  if (parsed.kind !== "local") return;
  const info = await stat(parsed.path).catch(() => null);
  if (!info) throw new NotFoundError(`${parsed.uri}: no such directory${purpose}`, { uri: parsed.uri });
  if (!info.isDirectory()) throw new NotFoundError(`${parsed.uri}: not a directory${purpose}`, { uri: parsed.uri });
}
