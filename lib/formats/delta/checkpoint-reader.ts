/**
 * Reads one checkpoint's actions (PROTOCOL.md "Checkpoints"):
 *   - classic `N.checkpoint.parquet` and multi-part `N.checkpoint.o.p.parquet` (every part; an
 *     incomplete set is never read: the listing marks it and the reader skips it);
 *   - V2 UUID-named `N.checkpoint.<uuid>.json|parquet`, whose file actions may live in sidecars
 *     under `_delta_log/_sidecars/` named by `sidecar` actions (a classic-named checkpoint of a V2
 *     table may name sidecars too).
 * Returns the actions plus every file read (for the head and for log cleanup's sidecar rule).
 *
 * checkpointProblem is the stricter proof log cleanup asks before a checkpoint becomes the one
 * every kept version replays from: the reader above falls back to an older checkpoint when one
 * cannot be used, but once the commits below it are deleted there is nothing to fall back to.
 */
import { CorruptFileError } from "../errors.ts";
import { NotFoundError } from "../../store/errors.ts";
import type { ObjectStore } from "../../store/object-store.ts";
import { mapConcurrent } from "../../store/map-concurrent.ts";
import { commitActionsOf, parseCommit } from "./actions.ts";
import type { DeltaAction, SidecarAction } from "./actions.ts";
import { jsonLineRecords, parquetProblem, sizeProblem } from "./file-proof.ts";
import type { CheckpointFiles } from "./log-listing.ts";
import { cachedActions } from "./log-cache.ts";
import { sidecarKey } from "./log-names.ts";
import { parquetActions, parquetActionsRead, readParquetActions } from "./parquet-actions.ts";
import { checkpointFileBytes } from "./checkpoint-bytes.ts";
import type { LogFileIdentity } from "./checkpoint-bytes.ts";
import { decodeDeltaPath } from "./paths.ts";

/** A checkpoint that cannot be used (incomplete, unreadable, a sidecar missing): a reader may fall back to an older one. */
export class CheckpointReadError extends CorruptFileError {}

export interface CheckpointRead {
  version: number;
  actions: DeltaAction[];
  /** Keys of the checkpoint files read (parts in order). */
  files: string[];
  /** Keys of the sidecars it names. */
  sidecars: string[];
}

const CONCURRENCY = 8;

export async function readCheckpoint(store: ObjectStore, checkpoint: CheckpointFiles): Promise<CheckpointRead> {
  if (!checkpoint.complete) {
    throw new CheckpointReadError(
      store.uriOf(checkpoint.files[0]?.key ?? "_delta_log/"),
      `checkpoint ${checkpoint.version} is incomplete: ${checkpoint.problem ?? "a part is missing"}`,
    );
  }
  const parts = await mapConcurrent(checkpoint.files, CONCURRENCY, (file) =>
    cachedActions(store.uriOf(file.key), file.etag, async () => {
      try {
        return await checkpointPartActions(store, file);
      } catch (error) {
        if (error instanceof CorruptFileError || error instanceof NotFoundError) {
          throw new CheckpointReadError(store.uriOf(file.key), `checkpoint ${checkpoint.version} cannot be used: ${error.message}`, { cause: error });
        }
        throw error;
      }
    }),
  );
  const own = parts.flat();
  const sidecarActions = own.filter((a): a is { sidecar: SidecarAction } => "sidecar" in a).map((a) => a.sidecar);
  const sidecars: string[] = [];
  for (const sidecar of sidecarActions) {
    const decoded = decodeDeltaPath(sidecar.path);
    if (decoded.kind !== "relative") {
      throw new CheckpointReadError(store.uriOf(checkpoint.files[0]!.key), `sidecar path "${sidecar.path}" is not a relative path under _delta_log/_sidecars/`);
    }
    sidecars.push(sidecarKey(decoded.path));
  }
  const fromSidecars = await mapConcurrent(sidecars, CONCURRENCY, async (key) => {
    try {
      return await readParquetActions(store, key);
    } catch (error) {
      if (error instanceof NotFoundError || error instanceof CorruptFileError) {
        throw new CheckpointReadError(store.uriOf(key), `sidecar named by checkpoint ${checkpoint.version} cannot be read: ${error.message}`, { cause: error });
      }
      throw error;
    }
  });
  const actions = own.filter((a) => !("sidecar" in a));
  for (const list of fromSidecars) actions.push(...list.filter((a) => "add" in a || "remove" in a));
  return { version: checkpoint.version, actions, files: checkpoint.files.map((f) => f.key), sidecars };
}

/** One checkpoint file's actions (a part, or a V2 top-level file), its bytes read once per run (checkpoint-bytes.ts). */
export async function checkpointPartActions(store: ObjectStore, file: { key: string } & LogFileIdentity): Promise<DeltaAction[]> {
  const body = await checkpointFileBytes(store, file.key, file);
  return file.key.endsWith(".json") ? parseCommit(body, store.uriOf(file.key)) : parquetActions(body, store.uriOf(file.key));
}

/**
 * Why `checkpoint` cannot be the checkpoint kept versions replay from, or null when it can: it
 * is complete (every part its names announce is listed), every part exists and decodes whole
 * (every page of a Parquet part, every line of a JSON one), the parts together hold the protocol
 * and metaData, and every sidecar it names exists, has the size the checkpoint records and
 * decodes whole. Reads each file once; the problem names the file. (`_last_checkpoint`'s size
 * fields are not compared: writers fill them differently, and it is only a hint.)
 */
export async function checkpointProblem(store: ObjectStore, checkpoint: CheckpointFiles): Promise<string | null> {
  // The part count is in every part's name; the listing marks a set with a part absent incomplete.
  if (!checkpoint.complete) return checkpoint.problem ?? "a part is missing";
  const actions: DeltaAction[] = [];
  for (const file of checkpoint.files) {
    const read = await wholeActions(store, file.key, file.key.endsWith(".json") ? "json" : "parquet", null, file);
    if (typeof read === "string") return read;
    actions.push(...read);
  }
  if (!actions.some((a) => "protocol" in a)) return `${checkpoint.files[0]!.key} holds no protocol action: truncated or damaged`;
  if (!actions.some((a) => "metaData" in a)) return `${checkpoint.files[0]!.key} holds no metaData action: truncated or damaged`;
  for (const action of actions) {
    if (!("sidecar" in action)) continue;
    const decoded = decodeDeltaPath(action.sidecar.path);
    if (decoded.kind !== "relative") return `sidecar path "${action.sidecar.path}" is not a relative path under _delta_log/_sidecars/`;
    const recorded = typeof action.sidecar.sizeInBytes === "number" ? action.sidecar.sizeInBytes : null;
    const read = await wholeActions(store, sidecarKey(decoded.path), "parquet", recorded);
    if (typeof read === "string") return `sidecar ${read}`;
  }
  return null;
}

/** One checkpoint file's actions, read and proven whole; or the problem, naming the file. */
async function wholeActions(
  store: ObjectStore,
  key: string,
  kind: "json" | "parquet",
  recordedSize: number | null = null,
  listed: LogFileIdentity = {},
): Promise<DeltaAction[] | string> {
  let body: Uint8Array;
  try {
    body = await checkpointFileBytes(store, key, listed);
  } catch (error) {
    if (error instanceof NotFoundError) return `${key} does not exist`;
    throw error;
  }
  const read = await provenActions(store.uriOf(key), body, kind, recordedSize);
  return typeof read === "string" ? `${key}: ${read}` : read;
}

/**
 * The actions in one log file's bytes (a checkpoint part, a sidecar, a commit), proven whole
 * first (file-proof.ts); or the problem in a few words. `recordedSize`: the size the log records.
 */
export async function provenActions(uri: string, body: Uint8Array, kind: "json" | "parquet", recordedSize: number | null = null): Promise<DeltaAction[] | string> {
  if (recordedSize !== null && body.byteLength !== recordedSize) return sizeProblem(body.byteLength, recordedSize);
  try {
    return kind === "json" ? provenJsonActions(uri, body) : await provenParquetActions(uri, body);
  } catch (error) {
    if (error instanceof CorruptFileError) return error.message.startsWith(`${uri}: `) ? error.message.slice(uri.length + 2) : error.message;
    throw error;
  }
}

/** Each line parsed once, for the proof and for the actions. */
function provenJsonActions(uri: string, body: Uint8Array): DeltaAction[] | string {
  const lines = jsonLineRecords(body);
  return typeof lines === "string" ? lines : commitActionsOf(lines, uri);
}

/**
 * The file's structure and page checksums first; then its actions, whose read decodes every page
 * when every column is an action column (a checkpoint's are), so the pages are decoded once;
 * else every page is decoded on its own too.
 */
function provenParquetActions(uri: string, body: Uint8Array): Promise<DeltaAction[] | string> {
  // By the bytes' identity, as parquetActionsRead: log cleanup's proof and the proof stage ask for the same checkpoint.
  const known = provenParquet.get(body);
  if (known && known.uri === uri) return known.proof;
  const proof = proveParquetActions(uri, body);
  provenParquet.set(body, { uri, proof });
  return proof;
}

const provenParquet = new WeakMap<Uint8Array, { uri: string; proof: Promise<DeltaAction[] | string> }>();

async function proveParquetActions(uri: string, body: Uint8Array): Promise<DeltaAction[] | string> {
  const structure = await parquetProblem(body, { decode: false });
  if (structure) return structure;
  const read = await parquetActionsRead(body, uri);
  if (read.everyColumn) return read.actions;
  return (await parquetProblem(body)) ?? read.actions;
}
