/**
 * Reads one checkpoint's actions (PROTOCOL.md "Checkpoints"):
 *   - classic `N.checkpoint.parquet` and multi-part `N.checkpoint.o.p.parquet` (every part; an
 *     incomplete set is never read: the listing marks it and the reader skips it);
 *   - V2 UUID-named `N.checkpoint.<uuid>.json|parquet`, whose file actions may live in sidecars
 *     under `_delta_log/_sidecars/` named by `sidecar` actions (a classic-named checkpoint of a V2
 *     table may name sidecars too).
 * Returns the actions plus every file read (for the head and for log cleanup's sidecar rule).
 */
import { CorruptFileError } from "../errors.ts";
import { NotFoundError } from "../../store/errors.ts";
import type { ObjectStore } from "../../store/object-store.ts";
import { mapConcurrent } from "../../store/map-concurrent.ts";
import { parseCommit } from "./actions.ts";
import type { DeltaAction, SidecarAction } from "./actions.ts";
import type { CheckpointFiles } from "./log-listing.ts";
import { cachedActions } from "./log-cache.ts";
import { sidecarKey } from "./log-names.ts";
import { readParquetActions } from "./parquet-actions.ts";
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
    throw new CheckpointReadError(store.uriOf(checkpoint.files[0]?.key ?? "_delta_log/"), `checkpoint ${checkpoint.version} is incomplete: ${checkpoint.problem ?? "a part is missing"}`);
  }
  const parts = await mapConcurrent(checkpoint.files, CONCURRENCY, (file) =>
    cachedActions(store.uriOf(file.key), file.etag, async () => {
      try {
        if (file.key.endsWith(".json")) return parseCommit((await store.get(file.key)).body, store.uriOf(file.key));
        return await readParquetActions(store, file.key);
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
