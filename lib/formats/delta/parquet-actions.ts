/**
 * Reads Delta actions out of a Parquet file (a classic or multi-part checkpoint, a V2 Parquet
 * checkpoint, a sidecar) with hyparquet: each row has one non-null action column. Only the
 * action columns are read (not `add.stats_parsed` and the like beyond what the row holds).
 */
import { CorruptFileError } from "../errors.ts";
import type { ObjectStore } from "../../store/object-store.ts";
import { toAction } from "./actions.ts";
import type { DeltaAction } from "./actions.ts";

const ACTION_COLUMNS = new Set(["add", "remove", "metaData", "protocol", "txn", "domainMetadata", "checkpointMetadata", "sidecar"]);

export async function readParquetActions(store: ObjectStore, key: string): Promise<DeltaAction[]> {
  return parquetActions((await store.get(key)).body, store.uriOf(key));
}

/** The actions in a Parquet checkpoint or sidecar's bytes (`uri` names it in errors). */
export async function parquetActions(body: Uint8Array, uri: string): Promise<DeltaAction[]> {
  return (await parquetActionsRead(body, uri)).actions;
}

export interface ParquetActionsRead {
  actions: DeltaAction[];
  /** Every top-level column is an action column: reading them decoded every page of the file. */
  everyColumn: boolean;
}

/**
 * By the bytes' identity: a run reads a checkpoint's bytes once (checkpoint-bytes.ts), and the
 * snapshot, log cleanup's proof and the proof stage each asked for its actions, decoding the
 * file again each time.
 */
const reads = new WeakMap<Uint8Array, { uri: string; read: Promise<ParquetActionsRead> }>();

/** parquetActions, and whether the read decoded every column of the file. */
export function parquetActionsRead(body: Uint8Array, uri: string): Promise<ParquetActionsRead> {
  const known = reads.get(body);
  // Errors name the file: the same bytes under another name are decoded for that name.
  if (known && known.uri === uri) return known.read;
  const read = decodeActions(body, uri);
  reads.set(body, { uri, read });
  return read;
}

async function decodeActions(body: Uint8Array, uri: string): Promise<ParquetActionsRead> {
  // Loaded here, not with the module: a process that never reads a Delta checkpoint need not hold them.
  const [{ parquetMetadata, parquetReadObjects }, { compressors }] = await Promise.all([import("hyparquet"), import("hyparquet-compressors")]);
  const file = body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer;
  let rows: Record<string, unknown>[];
  let everyColumn: boolean;
  try {
    const metadata = parquetMetadata(file);
    const names = topLevelNames(metadata.schema);
    const columns = names.filter((name) => ACTION_COLUMNS.has(name));
    everyColumn = columns.length === names.length;
    rows = await parquetReadObjects({ file, metadata, columns, compressors });
  } catch (error) {
    throw new CorruptFileError(uri, `not a readable Parquet checkpoint: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const actions: DeltaAction[] = [];
  rows.forEach((row, i) => {
    const action = toAction(row, uri, `row ${i}`);
    if (action) actions.push(action);
  });
  return { actions, everyColumn };
}

/** Names of the root's direct children in a flattened Parquet schema (element 0 is the root). */
function topLevelNames(elements: readonly { name: string; num_children?: number | undefined }[]): string[] {
  const names: string[] = [];
  let position = 1;
  while (position < elements.length) {
    names.push(elements[position]!.name);
    position = skipSubtree(elements, position);
  }
  return names;
}

function skipSubtree(elements: readonly { num_children?: number | undefined }[], position: number): number {
  const children = elements[position]!.num_children ?? 0;
  let next = position + 1;
  for (let i = 0; i < children; i++) next = skipSubtree(elements, next);
  return next;
}
