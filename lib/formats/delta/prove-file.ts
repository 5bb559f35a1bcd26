/**
 * TableFormat.proveFile for Delta: whether one file a kept version depends on is whole, by its
 * role (the pipeline's proof stage asks before the first delete; a missing file is its own check):
 *   - commit: every line parses as a JSON object and every known action has its required fields;
 *   - checkpoint (a part, or a V2 top-level file) and sidecar: decodes whole (file-proof.ts:
 *     every page of a Parquet file, every line of a JSON one), at the size recorded when there is one;
 *   - data and change data (Parquet): the size the log records, and PAR1 with a footer length
 *     that fits at its end, from one ranged GET of the last 8 bytes;
 *   - deletion vector: the size recorded when there is one, and every entry's magic and CRC-32.
 * Other roles (the `.crc` version checksums, which no reader needs to read a version) prove
 * nothing here. Each file is read at most once.
 */
import { NotFoundError } from "../../store/errors.ts";
import type { ObjectInfo, ObjectStore } from "../../store/object-store.ts";
import type { FileReference } from "../table-format.ts";
import { checkpointFileBytes } from "./checkpoint-bytes.ts";
import { provenActions } from "./checkpoint-reader.ts";
import { deletionVectorProblem, parquetTailProblem, sizeProblem } from "./file-proof.ts";

const PROVEN_ROLES: ReadonlySet<string> = new Set(["commit", "checkpoint", "sidecar", "data", "change-data", "delete"]);

export async function proveDeltaFile(store: ObjectStore, file: FileReference, listed: ObjectInfo): Promise<string | null> {
  if (!PROVEN_ROLES.has(file.role)) return null;
  const recorded = file.size ?? null;
  if (recorded !== null && listed.size !== recorded) return sizeProblem(listed.size, recorded);
  try {
    switch (file.role) {
      case "commit":
        return problemOf(await provenActions(store.uriOf(file.path), await body(store, file.path), "json"));
      case "checkpoint":
      case "sidecar": {
        const kind = file.path.endsWith(".json") ? "json" : "parquet";
        // A checkpoint's bytes as the snapshot and log cleanup's proof read them this run: one GET.
        return problemOf(await provenActions(store.uriOf(file.path), await checkpointFileBytes(store, file.path, listed), kind, recorded));
      }
      case "data":
      case "change-data":
        return await parquetTail(store, file.path, listed, recorded);
      case "delete": {
        const bytes = await body(store, file.path);
        return recorded !== null && bytes.byteLength !== recorded ? sizeProblem(bytes.byteLength, recorded) : deletionVectorProblem(bytes);
      }
    }
    return null;
  } catch (error) {
    if (error instanceof NotFoundError) return "does not exist";
    throw error;
  }
}

async function body(store: ObjectStore, key: string): Promise<Uint8Array> {
  return (await store.get(key)).body;
}

function problemOf(read: unknown[] | string): string | null {
  return typeof read === "string" ? read : null;
}

async function parquetTail(store: ObjectStore, key: string, listed: ObjectInfo, recorded: number | null): Promise<string | null> {
  // An empty object has no last bytes to ask for (S3 answers a suffix range of one with 416).
  if (listed.size === 0) return recorded === null ? "empty (0 bytes)" : sizeProblem(0, recorded);
  const tail = await store.get(key, { suffixLength: 8 });
  if (recorded !== null && tail.size !== recorded) return sizeProblem(tail.size, recorded);
  return parquetTailProblem(tail.body, tail.size);
}
