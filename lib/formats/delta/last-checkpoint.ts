/**
 * `_delta_log/_last_checkpoint` (PROTOCOL.md "Last Checkpoint File"): a hint naming a checkpoint
 * near the log tail. It is only a hint: a missing, unparsable or checksum-failing file is treated
 * as absent and the reader lists the log instead (as delta-rs and Spark do). Old delta-rs wrote
 * `size_in_bytes` (snake case); fields beyond `version` are read leniently.
 */
import type { ObjectStore } from "../../store/object-store.ts";
import { NotFoundError } from "../../store/errors.ts";
import { jsonChecksum } from "./json-checksum.ts";
import { LAST_CHECKPOINT_KEY } from "./log-names.ts";

export interface LastCheckpoint {
  version: number;
  size?: number;
  parts?: number;
  /** The V2 checkpoint file it names, when Spark wrote a `v2Checkpoint` block. */
  v2CheckpointPath?: string;
  /** True when a checksum was present and matched. */
  checksumVerified: boolean;
}

export type LastCheckpointRead = { kind: "absent" } | { kind: "invalid"; reason: string } | { kind: "valid"; hint: LastCheckpoint };

/** Parses the bytes of a `_last_checkpoint` file. */
export function parseLastCheckpoint(bytes: Uint8Array): LastCheckpointRead {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return { kind: "invalid", reason: "is not valid JSON" };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { kind: "invalid", reason: "is not a JSON object" };
  const record = value as Record<string, unknown>;
  const version = record.version;
  if (typeof version !== "number" || !Number.isSafeInteger(version) || version < 0) {
    return { kind: "invalid", reason: 'has no valid "version"' };
  }
  let checksumVerified = false;
  if (record.checksum !== undefined) {
    if (typeof record.checksum !== "string") return { kind: "invalid", reason: "has a checksum that is not a string" };
    const actual = jsonChecksum(record);
    if (actual !== record.checksum) return { kind: "invalid", reason: `checksum mismatch (file says ${record.checksum}, content gives ${actual})` };
    checksumVerified = true;
  }
  const hint: LastCheckpoint = { version, checksumVerified };
  if (typeof record.size === "number") hint.size = record.size;
  if (typeof record.parts === "number") hint.parts = record.parts;
  const v2 = record.v2Checkpoint as { path?: unknown } | undefined;
  if (v2 && typeof v2.path === "string") hint.v2CheckpointPath = v2.path;
  return { kind: "valid", hint };
}

export async function readLastCheckpoint(store: ObjectStore): Promise<LastCheckpointRead> {
  try {
    const { body } = await store.get(LAST_CHECKPOINT_KEY);
    return parseLastCheckpoint(body);
  } catch (error) {
    if (error instanceof NotFoundError) return { kind: "absent" };
    throw error;
  }
}
