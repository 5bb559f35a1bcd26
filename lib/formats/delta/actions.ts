/**
 * Delta log actions (PROTOCOL.md "Actions"), as read from a JSON commit (one action per line) or a
 * checkpoint row (one non-null action column per row). Both sources are normalised here into the
 * same plain shapes: numbers as JS numbers (Parquet longs arrive as BigInt), maps as objects.
 */
import { CorruptFileError } from "../errors.ts";

export interface DeletionVectorDescriptor {
  /** `u` relative path from a Z85 UUID, `p` absolute path, `i` inline. */
  storageType: string;
  pathOrInlineDv: string;
  offset?: number;
  sizeInBytes: number;
  cardinality: number;
}

export interface AddAction {
  path: string;
  partitionValues: Record<string, string | null>;
  size: number;
  modificationTime: number;
  dataChange: boolean;
  stats?: string | null;
  /** The struct form of stats, in Parquet checkpoints only (numbers already converted from BigInt). */
  stats_parsed?: { numRecords?: unknown } | null;
  tags?: Record<string, string | null> | null;
  deletionVector?: DeletionVectorDescriptor | null;
  baseRowId?: number | null;
  defaultRowCommitVersion?: number | null;
  clusteringProvider?: string | null;
}

export interface RemoveAction {
  path: string;
  /** Milliseconds; a missing value counts as 0 (always expired) for VACUUM. */
  deletionTimestamp?: number | null;
  dataChange: boolean;
  extendedFileMetadata?: boolean | null;
  partitionValues?: Record<string, string | null> | null;
  size?: number | null;
  deletionVector?: DeletionVectorDescriptor | null;
}

export interface MetadataAction {
  id: string;
  name?: string | null;
  description?: string | null;
  format: { provider: string; options?: Record<string, string> | null };
  schemaString: string | null;
  partitionColumns: string[];
  configuration: Record<string, string>;
  createdTime?: number | null;
}

export interface ProtocolAction {
  minReaderVersion: number;
  minWriterVersion: number;
  readerFeatures?: string[] | null;
  writerFeatures?: string[] | null;
}

export interface TxnAction {
  appId: string;
  version: number;
  lastUpdated?: number | null;
}

export interface DomainMetadataAction {
  domain: string;
  configuration: string;
  removed: boolean;
}

export interface CdcAction {
  path: string;
  partitionValues: Record<string, string | null>;
  size: number;
  dataChange: boolean;
}

export interface SidecarAction {
  path: string;
  sizeInBytes: number;
  modificationTime: number;
}

export interface CheckpointMetadataAction {
  version: number;
  tags?: Record<string, string> | null;
}

/** commitInfo is free-form; these are the fields lakewarden reads. */
export interface CommitInfoAction {
  timestamp?: number;
  inCommitTimestamp?: number;
  operation?: string;
  operationParameters?: Record<string, unknown>;
  operationMetrics?: Record<string, unknown>;
  readVersion?: number;
  txnId?: string;
  [key: string]: unknown;
}

export type DeltaAction =
  | { add: AddAction }
  | { remove: RemoveAction }
  | { metaData: MetadataAction }
  | { protocol: ProtocolAction }
  | { txn: TxnAction }
  | { domainMetadata: DomainMetadataAction }
  | { cdc: CdcAction }
  | { commitInfo: CommitInfoAction }
  | { sidecar: SidecarAction }
  | { checkpointMetadata: CheckpointMetadataAction };

const KNOWN = ["add", "remove", "metaData", "protocol", "txn", "domainMetadata", "cdc", "commitInfo", "sidecar", "checkpointMetadata"] as const;

/** Converts Parquet BigInts to numbers (exact within 2^53; beyond that the value cannot be a real size or time). */
export function plainValue(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (Array.isArray(value)) return value.map(plainValue);
  if (value instanceof Date) return value.getTime();
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = plainValue(v);
    return out;
  }
  return value;
}

/**
 * One action from a JSON line or checkpoint row: the first known action key whose value is an
 * object. Null for a row/line with no known action (unknown actions are ignored, as the
 * protocol asks). Throws CorruptFileError when a known action lacks a required field. The
 * action's value is the record's own, its BigInts and Dates made numbers in place: the record is
 * the caller's to give (a row a Parquet reader just made).
 */
export function toAction(record: Record<string, unknown>, uri: string, where: string): DeltaAction | null {
  return actionOf(record, uri, where, true);
}

/**
 * plainValue, converting the caller's own value where it lies (no copy): for rows a Parquet
 * reader just made, which nothing else holds. Each row's action was otherwise copied whole.
 */
function plainInPlace(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (value instanceof Date) return value.getTime();
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = plainInPlace(value[i]);
  } else if (value !== null && typeof value === "object") {
    const object = value as Record<string, unknown>;
    for (const key of Object.keys(object)) object[key] = plainInPlace(object[key]);
  }
  return value;
}

/** `plain`: the record may hold Parquet's BigInts and Dates (JSON.parse gives neither); either way its objects are the caller's to keep. */
function actionOf(record: Record<string, unknown>, uri: string, where: string, plain: boolean): DeltaAction | null {
  for (const name of KNOWN) {
    const value = record[name];
    if (value === null || value === undefined || typeof value !== "object") continue;
    const body = (plain ? plainInPlace(value) : value) as Record<string, unknown>;
    checkRequired(name, body, uri, where);
    return { [name]: body } as unknown as DeltaAction;
  }
  return null;
}

function checkRequired(name: (typeof KNOWN)[number], body: Record<string, unknown>, uri: string, where: string): void {
  const need = (field: string, type: string) => {
    if (typeof body[field] !== type) throw new CorruptFileError(uri, `${where}: ${name} action has no ${type} "${field}"`);
  };
  switch (name) {
    case "add":
      need("path", "string");
      need("size", "number");
      body.partitionValues ??= {};
      break;
    case "remove":
    case "cdc":
    case "sidecar":
      need("path", "string");
      break;
    case "metaData":
      // Hand-written test tables (Spark's golden "Manual Update" tables) have no schema.
      body.schemaString ??= null;
      body.partitionColumns ??= [];
      body.configuration ??= {};
      break;
    case "protocol":
      need("minReaderVersion", "number");
      need("minWriterVersion", "number");
      break;
    case "txn":
      need("appId", "string");
      break;
    case "domainMetadata":
      need("domain", "string");
      break;
    default:
      break;
  }
}

/**
 * Parses a JSON commit (newline-delimited actions). A line that does not parse (a truncated or
 * damaged commit) is a CorruptFileError naming the file and line.
 */
export function parseCommit(bytes: Uint8Array, uri: string): DeltaAction[] {
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  const actions: DeltaAction[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      throw new CorruptFileError(uri, `line ${i + 1} is not valid JSON (a truncated or damaged commit)`);
    }
    if (record === null || typeof record !== "object" || Array.isArray(record)) {
      throw new CorruptFileError(uri, `line ${i + 1} is not a JSON object`);
    }
    const action = actionOf(record as Record<string, unknown>, uri, `line ${i + 1}`, false);
    if (action) actions.push(action);
  }
  if (actions.length === 0) throw new CorruptFileError(uri, "the commit holds no action");
  return actions;
}

/**
 * The actions of a commit's lines already parsed (file-proof.ts jsonLineRecords: every line a
 * JSON object), line numbers as in the file; parseCommit's answer without parsing them again.
 */
export function commitActionsOf(lines: readonly { line: number; record: Record<string, unknown> }[], uri: string): DeltaAction[] {
  const actions: DeltaAction[] = [];
  for (const { line, record } of lines) {
    const action = actionOf(record, uri, `line ${line}`, false);
    if (action) actions.push(action);
  }
  if (actions.length === 0) throw new CorruptFileError(uri, "the commit holds no action");
  return actions;
}
