/**
 * Lance manifest decoding without protobufjs `toObject`, in two depths:
 *
 * - `decodeLanceManifestFile`: the whole version as a LanceManifest (what a head needs);
 * - `decodeLanceCleanupView`: only what cleanup and the version history need (the version
 *   record's inputs, the referenced files, the config): no live files, no schema.
 *
 * Fragments are most of a manifest (100K fragments = 8 MB), so they are read straight from
 * the wire by a small reader limited to the DataFragment / DataFile / DeletionFile fields we
 * use, with field numbers taken from the committed descriptor (nothing restated from the
 * .proto). Everything else (schema, config, writer, flags, index section, transaction) is a
 * few KB and goes through protobufjs `decode`, with 64-bit values converted where used.
 * test/formats/lance/manifest-reader.test.ts proves both depths equal to the protobufjs
 * `toObject` decoding (manifest-file.ts `decodeManifestFile` + manifest-model.ts).
 */
import { Buffer } from "node:buffer";
import type protobuf from "protobufjs";
import type { FileReference, ReferenceSequence, UnresolvedReference } from "../table-format.ts";
import { CorruptFileError, UnsupportedFeatureError } from "../errors.ts";
import type { VersionTotals } from "../../model/version-record.ts";
import { assertReadable } from "./feature-flags.ts";
import { manifestMessageBytes, sectionAt } from "./manifest-file.ts";
import type { DeletionFileSuffix, LanceDataFile, LanceDeletionFile, LanceFragment, LanceIndex, LanceManifest, LanceTransaction } from "./manifest-model.ts";
import { formatUuid } from "./manifest-model.ts";
import { operationName } from "./operation-names.ts";
import { lanceProtoRoot as root } from "./proto-messages.ts";
import { DATA_PREFIX, DELETIONS_PREFIX, TRANSACTIONS_PREFIX } from "./table-paths.ts";
import { indexOwnsFolder, indexReferences, resolveUnder } from "./snapshot-files.ts";

const manifestType = root.lookupType("lance.table.Manifest");
const fragmentType = root.lookupType("lance.table.DataFragment");
const dataFileType = root.lookupType("lance.table.DataFile");
const deletionFileType = root.lookupType("lance.table.DeletionFile");
const indexSectionType = root.lookupType("lance.table.IndexSection");
const transactionType = root.lookupType("lance.table.Transaction");

function fieldId(type: protobuf.Type, name: string): number {
  const field = type.fields[name];
  if (!field) throw new Error(`the Lance descriptor has no ${type.name}.${name}`);
  return field.id;
}

const F = {
  manifestFragments: fieldId(manifestType, "fragments"),
  fragmentId: fieldId(fragmentType, "id"),
  fragmentFiles: fieldId(fragmentType, "files"),
  fragmentDeletion: fieldId(fragmentType, "deletion_file"),
  fragmentPhysicalRows: fieldId(fragmentType, "physical_rows"),
  filePath: fieldId(dataFileType, "path"),
  fileMajor: fieldId(dataFileType, "file_major_version"),
  fileMinor: fieldId(dataFileType, "file_minor_version"),
  fileSize: fieldId(dataFileType, "file_size_bytes"),
  fileBaseId: fieldId(dataFileType, "base_id"),
  deletionType: fieldId(deletionFileType, "file_type"),
  deletionReadVersion: fieldId(deletionFileType, "read_version"),
  deletionId: fieldId(deletionFileType, "id"),
  deletionRows: fieldId(deletionFileType, "num_deleted_rows"),
  deletionBaseId: fieldId(deletionFileType, "base_id"),
} as const;

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const WIRE_I32 = 5;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const DELETION_SUFFIXES: readonly DeletionFileSuffix[] = ["arrow", "bin"];

/** A cursor over protobuf wire bytes; every read is bounds-checked against `end`. */
class Wire {
  readonly buf: Buffer;
  pos: number;
  end: number;
  readonly uri: string;
  /** The message being read, for errors. */
  readonly message: string;
  constructor(buf: Uint8Array, start: number, end: number, uri: string, message = "Manifest") {
    this.buf = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
    this.pos = start;
    this.end = end;
    this.uri = uri;
    this.message = message;
  }

  corrupt(reason: string): CorruptFileError {
    return new CorruptFileError(this.uri, `cannot decode the ${this.message} protobuf: ${reason}`);
  }

  /** A length-delimited string field's value (the tag already read). */
  string(wireType: number, what: string): string {
    this.expect(wireType, WIRE_LEN, what);
    const stop = this.lengthEnd();
    const text = this.buf.toString("utf8", this.pos, stop);
    this.pos = stop;
    return text;
  }

  /** A varint field's value (the tag already read). */
  varintField(wireType: number, what: string): number | bigint {
    this.expect(wireType, WIRE_VARINT, what);
    return this.varint();
  }

  /**
   * One entry of a map<string, string> field into `into` (the tag already read), as protobufjs
   * decodes it: a missing key or value is "", a later entry for the same key wins.
   */
  mapEntry(wireType: number, what: string, into: Record<string, string>): void {
    this.expect(wireType, WIRE_LEN, what);
    const stop = this.lengthEnd();
    const outer = this.end;
    this.end = stop;
    let key = "";
    let value = "";
    while (this.pos < stop) {
      const tag = this.uint32();
      if (tag >>> 3 === 1) key = this.string(tag & 7, `${what} key`);
      else if (tag >>> 3 === 2) value = this.string(tag & 7, `${what} value`);
      else this.skip(tag & 7);
    }
    this.end = outer;
    into[key] = value;
  }

  /** A varint as a number when it is below 2^53, else as a bigint (at most 64 bits). */
  varint(): number | bigint {
    const buf = this.buf;
    let pos = this.pos;
    let value = 0;
    let mul = 1;
    for (let i = 0; i < 7; i++) {
      if (pos >= this.end) throw this.corrupt("truncated varint");
      const b = buf[pos++]!;
      value += (b & 0x7f) * mul;
      if (b < 0x80) {
        this.pos = pos;
        return value;
      }
      mul *= 128;
    }
    let big = BigInt(value);
    let shift = 49n;
    for (let i = 7; i < 10; i++) {
      if (pos >= this.end) throw this.corrupt("truncated varint");
      const b = buf[pos++]!;
      big |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) {
        this.pos = pos;
        big = BigInt.asUintN(64, big);
        return big <= MAX_SAFE ? Number(big) : big;
      }
      shift += 7n;
    }
    throw this.corrupt("varint longer than 10 bytes");
  }

  /** uint32 as protobufjs reads it: the varint modulo 2^32. */
  uint32(): number {
    // Tags below field 2,048 are one or two bytes (a Manifest has both: config is field 16): read
    // them with one arithmetic, without the general varint's number | bigint, which the compiler
    // then need not inline into every caller (lengthEnd does the same for lengths).
    const pos = this.pos;
    if (pos + 1 < this.end) {
      const b0 = this.buf[pos]!;
      const b1 = this.buf[pos + 1]!;
      const second = b0 >>> 7;
      if ((second & (b1 >>> 7)) === 0) {
        this.pos = pos + 1 + second;
        return (b0 & 0x7f) + second * (b1 << 7);
      }
    } else if (pos < this.end && this.buf[pos]! < 0x80) {
      this.pos = pos + 1;
      return this.buf[pos]!;
    }
    const v = this.varint();
    return typeof v === "bigint" ? Number(BigInt.asUintN(32, v)) : v >>> 0;
  }

  /** int32 (enums) as protobufjs reads it. */
  int32(): number {
    const v = this.varint();
    return typeof v === "bigint" ? Number(BigInt.asIntN(32, v)) : v | 0;
  }

  /** The end of a length-delimited field whose length prefix starts here. */
  lengthEnd(): number {
    // Most lengths (a fragment, a path) fit in one or two bytes: the general varint's number | bigint
    // result is not needed for them.
    // One- and two-byte lengths take the same arithmetic, no branch between them: a branch first
    // taken after the code was optimised (the first length over 127) threw that code away.
    const pos = this.pos;
    if (pos + 1 < this.end) {
      const b0 = this.buf[pos]!;
      const b1 = this.buf[pos + 1]!;
      const second = b0 >>> 7;
      if ((second & (b1 >>> 7)) === 0) {
        const start = pos + 1 + second;
        const short = (b0 & 0x7f) + second * (b1 << 7);
        if (start + short > this.end) throw this.corrupt("length-delimited field runs past its message");
        this.pos = start;
        return start + short;
      }
    }
    const length = this.varint();
    if (typeof length === "bigint" || this.pos + length > this.end) throw this.corrupt("length-delimited field runs past its message");
    return this.pos + length;
  }

  skip(wireType: number): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.varint();
        return;
      case WIRE_I64:
        this.pos += 8;
        break;
      case WIRE_LEN:
        this.pos = this.lengthEnd();
        return;
      case WIRE_I32:
        this.pos += 4;
        break;
      case 3: {
        // A group: skip fields until its end tag.
        for (;;) {
          const tag = this.uint32();
          if ((tag & 7) === 4) return;
          this.skip(tag & 7);
        }
      }
      default:
        throw this.corrupt(`invalid wire type ${wireType}`);
    }
    if (this.pos > this.end) throw this.corrupt("fixed-width field runs past its message");
  }

  expect(wireType: number, expected: number, what: string): void {
    if (wireType !== expected) throw this.corrupt(`${what} has wire type ${wireType}, expected ${expected}`);
  }
}

function safeNumber(value: number | bigint, what: string, uri: string): number {
  if (typeof value === "number") return value;
  throw new CorruptFileError(uri, `${what} ${value} is beyond the safe integer range (2^53 - 1)`);
}

/** The DataFragment wire fields we use, as read (before any validation). */
interface RawFragment {
  id: number | bigint;
  files: LanceDataFile[];
  deletion: RawDeletion | null;
  physicalRows: number | bigint;
}

interface RawDeletion {
  fileType: number;
  readVersion: number | bigint;
  id: number | bigint;
  numDeletedRows: number | bigint;
  baseId: number | null;
}

function readDataFile(wire: Wire, end: number): LanceDataFile {
  const file: LanceDataFile = { path: "", sizeBytes: 0, baseId: null, fileMajorVersion: 0, fileMinorVersion: 0 };
  let size: number | bigint = 0;
  const outer = wire.end;
  wire.end = end;
  while (wire.pos < end) {
    const tag = wire.uint32();
    const field = tag >>> 3;
    const type = tag & 7;
    if (field === F.filePath) {
      wire.expect(type, WIRE_LEN, "DataFile.path");
      const stop = wire.lengthEnd();
      file.path = wire.buf.toString("utf8", wire.pos, stop);
      wire.pos = stop;
    } else if (field === F.fileSize && type === WIRE_VARINT) size = wire.varint();
    else if (field === F.fileMajor && type === WIRE_VARINT) file.fileMajorVersion = wire.uint32();
    else if (field === F.fileMinor && type === WIRE_VARINT) file.fileMinorVersion = wire.uint32();
    else if (field === F.fileBaseId && type === WIRE_VARINT) file.baseId = wire.uint32();
    else wire.skip(type);
  }
  wire.end = outer;
  // Checked when the fragment's id is known, to name it in the error.
  (file as { sizeBytes: number | bigint }).sizeBytes = size;
  return file;
}

function readDeletion(wire: Wire, end: number, into: RawDeletion | null): RawDeletion {
  const deletion: RawDeletion = into ?? { fileType: 0, readVersion: 0, id: 0, numDeletedRows: 0, baseId: null };
  const outer = wire.end;
  wire.end = end;
  while (wire.pos < end) {
    const tag = wire.uint32();
    const field = tag >>> 3;
    const type = tag & 7;
    if (type !== WIRE_VARINT) wire.skip(type);
    else if (field === F.deletionType) deletion.fileType = wire.int32();
    else if (field === F.deletionReadVersion) deletion.readVersion = wire.varint();
    else if (field === F.deletionId) deletion.id = wire.varint();
    else if (field === F.deletionRows) deletion.numDeletedRows = wire.varint();
    else if (field === F.deletionBaseId) deletion.baseId = wire.uint32();
    else wire.skip(type);
  }
  wire.end = outer;
  return deletion;
}

function readRawFragment(wire: Wire, end: number): RawFragment {
  const fragment: RawFragment = { id: 0, files: [], deletion: null, physicalRows: 0 };
  const outer = wire.end;
  wire.end = end;
  while (wire.pos < end) {
    const tag = wire.uint32();
    const field = tag >>> 3;
    const type = tag & 7;
    if (field === F.fragmentId && type === WIRE_VARINT) fragment.id = wire.varint();
    else if (field === F.fragmentPhysicalRows && type === WIRE_VARINT) fragment.physicalRows = wire.varint();
    else if (field === F.fragmentFiles) {
      wire.expect(type, WIRE_LEN, "DataFragment.files");
      const stop = wire.lengthEnd();
      fragment.files.push(readDataFile(wire, stop));
      wire.pos = stop;
    } else if (field === F.fragmentDeletion) {
      wire.expect(type, WIRE_LEN, "DataFragment.deletion_file");
      const stop = wire.lengthEnd();
      fragment.deletion = readDeletion(wire, stop, fragment.deletion);
      wire.pos = stop;
    } else wire.skip(type);
  }
  wire.end = outer;
  return fragment;
}

/** The checked LanceFragment of a raw one, with the same errors as manifest-model.ts. */
function toFragment(raw: RawFragment, uri: string): LanceFragment {
  const id = safeNumber(raw.id, "fragment id", uri);
  const what = `fragment ${id}`;
  const physicalRows = safeNumber(raw.physicalRows, `${what} physical_rows`, uri);
  let deletionFile: LanceDeletionFile | null = null;
  const deletion = raw.deletion;
  if (deletion) {
    const suffix = DELETION_SUFFIXES[deletion.fileType];
    if (suffix === undefined) {
      throw new UnsupportedFeatureError(uri, `${what} has a deletion file of unknown type ${deletion.fileType}`);
    }
    const deleted = safeNumber(deletion.numDeletedRows, `${what} num_deleted_rows`, uri);
    deletionFile = {
      suffix,
      readVersion: BigInt(deletion.readVersion),
      id: BigInt(deletion.id),
      numDeletedRows: deleted === 0 ? null : deleted,
      baseId: deletion.baseId,
    };
  }
  for (const file of raw.files) file.sizeBytes = safeNumber(file.sizeBytes, `${what} file_size_bytes`, uri);
  return { id, files: raw.files, deletionFile, physicalRows: physicalRows === 0 ? null : physicalRows };
}

/** Manifest field numbers the cleanup view reads (from the descriptor). */
const M = {
  version: fieldId(manifestType, "version"),
  timestamp: fieldId(manifestType, "timestamp"),
  readerFeatureFlags: fieldId(manifestType, "reader_feature_flags"),
  transactionFile: fieldId(manifestType, "transaction_file"),
  config: fieldId(manifestType, "config"),
  branch: fieldId(manifestType, "branch"),
  indexSection: fieldId(manifestType, "index_section"),
  transactionSection: fieldId(manifestType, "transaction_section"),
} as const;

/** The field numbers readCleanupField reads: every other Manifest field is skipped before it. */
const CLEANUP_FIELDS = new Set<number>(Object.values(M));

/** Timestamp field numbers (the Manifest's timestamp message). */
const TIMESTAMP = {
  seconds: fieldId(root.lookupType("google.protobuf.Timestamp"), "seconds"),
  nanos: fieldId(root.lookupType("google.protobuf.Timestamp"), "nanos"),
} as const;

/**
 * One top-level Manifest field for the cleanup view, into `fields` under its descriptor name,
 * as protobufjs `decode` would leave it (64-bit values as numbers below 2^53, else bigints;
 * a later occurrence wins; `optional` fields present only when on the wire). The cleanup view
 * reads a handful of small fields: decoding them here spares protobufjs's per-message objects
 * and its decoder generation in a cold process. Every other field is skipped.
 */
function readCleanupField(wire: Wire, tag: number, fields: Record<string, unknown>): void {
  const field = tag >>> 3;
  const type = tag & 7;
  switch (field) {
    case M.version:
      fields.version = wire.varintField(type, "Manifest.version");
      return;
    case M.readerFeatureFlags:
      fields.reader_feature_flags = wire.varintField(type, "Manifest.reader_feature_flags");
      return;
    case M.indexSection:
      fields.index_section = wire.varintField(type, "Manifest.index_section");
      return;
    case M.transactionSection:
      fields.transaction_section = wire.varintField(type, "Manifest.transaction_section");
      return;
    case M.transactionFile:
      fields.transaction_file = wire.string(type, "Manifest.transaction_file");
      return;
    case M.branch:
      fields.branch = wire.string(type, "Manifest.branch");
      return;
    case M.config:
      wire.mapEntry(type, "Manifest.config", fields.config as Record<string, string>);
      return;
    case M.timestamp: {
      wire.expect(type, WIRE_LEN, "Manifest.timestamp");
      const stop = wire.lengthEnd();
      const outer = wire.end;
      wire.end = stop;
      // A repeated message field replaces the earlier one in protobufjs (no merge).
      const timestamp: { seconds: number | bigint; nanos: number } = { seconds: 0, nanos: 0 };
      while (wire.pos < stop) {
        const inner = wire.uint32();
        if (inner >>> 3 === TIMESTAMP.seconds) timestamp.seconds = wire.varintField(inner & 7, "Timestamp.seconds");
        else if (inner >>> 3 === TIMESTAMP.nanos) {
          wire.expect(inner & 7, WIRE_VARINT, "Timestamp.nanos");
          timestamp.nanos = wire.int32();
        } else wire.skip(inner & 7);
      }
      wire.end = outer;
      fields.timestamp = timestamp;
      return;
    }
    default:
      wire.skip(type);
  }
}

/** Transaction field numbers, and the operation oneof's cases in declaration order. */
const T = {
  readVersion: fieldId(transactionType, "read_version"),
  uuid: fieldId(transactionType, "uuid"),
  properties: fieldId(transactionType, "transaction_properties"),
  operations: new Map(transactionType.oneofs.operation!.oneof.map((name, order) => [fieldId(transactionType, name), { name, order }])),
} as const;

/**
 * The Transaction fields lakewarden reads (uuid, read_version, properties, which operation),
 * straight from the wire: the operation's own message (an append's new fragments, say) is
 * skipped, not decoded. Which case is set follows protobufjs's oneof getter: the first case
 * in declaration order present on the wire.
 */
function readTransactionFields(bytes: Uint8Array, uri: string): Record<string, unknown> {
  const wire = new Wire(bytes, 0, bytes.length, uri, "Transaction");
  const message: Record<string, unknown> = { uuid: "", read_version: 0, transaction_properties: {} };
  let operation: { name: string; order: number } | null = null;
  while (wire.pos < bytes.length) {
    const tag = wire.uint32();
    const field = tag >>> 3;
    const type = tag & 7;
    if (field === 0) throw wire.corrupt("field number 0");
    if (field === T.readVersion) message.read_version = wire.varintField(type, "Transaction.read_version");
    else if (field === T.uuid) message.uuid = wire.string(type, "Transaction.uuid");
    else if (field === T.properties) wire.mapEntry(type, "Transaction.transaction_properties", message.transaction_properties as Record<string, string>);
    else {
      const found = T.operations.get(field);
      if (found) {
        wire.expect(type, WIRE_LEN, `Transaction.${found.name}`);
        if (operation === null || found.order < operation.order) operation = found;
      }
      wire.skip(type);
    }
  }
  if (operation) message.operation = operation.name;
  return message;
}

/** The fragments of a Manifest message as splitManifest found them. */
interface FragmentRanges {
  /** Where the first fragment's tag starts (0 when there is none). */
  base: number;
  /** Per fragment, the start and end of its message bytes, relative to `base`. */
  ranges: Int32Array;
  count: number;
  /** No other field lies between the first fragment and the last. */
  contiguous: boolean;
  /** Leading fragments taken from `previous` by one byte comparison (their bytes were not walked). */
  reused: number;
}

/**
 * The fragment run of the manifest decoded before this one (FragmentCache): its bytes from the
 * first fragment's tag to the last fragment's end, with no other field among them.
 */
export interface PreviousFragmentRun {
  buf: Buffer;
  start: number;
  length: number;
  ranges: Int32Array;
  count: number;
}

/**
 * How many fragments of `previous` start this manifest at `at` (its first fragment's tag): all
 * of them when the whole run is equal byte for byte (a table's next version usually repeats
 * the last one's fragments and adds some), else none. Equal bytes from the same tag parse the
 * same: those fragments need neither walking nor decoding.
 */
function reusedRun(buf: Buffer, at: number, previous: PreviousFragmentRun | null): number {
  if (previous === null || at + previous.length > buf.length) return 0;
  return buf.compare(previous.buf, previous.start, previous.start + previous.length, at, at + previous.length) === 0 ? previous.count : 0;
}

/**
 * Splits the Manifest message: the byte ranges of its fragments (in order), and the other
 * top-level fields: with `cleanupOnly`, the few the cleanup view reads, straight from the wire
 * (readCleanupField); otherwise all of them, decoded by protobufjs (a message built from
 * those fields alone: protobuf merges them exactly as it would in the whole message).
 */
function splitManifest(wire: Wire, uri: string, cleanupOnly = false, previous: PreviousFragmentRun | null = null): { fragments: FragmentRanges; rest: Record<string, unknown> } {
  const bytes = wire.buf;
  // protobufjs's defaults for the fields read; `optional` ones stay absent until seen.
  const fields: Record<string, unknown> = { version: 0, reader_feature_flags: 0, transaction_file: "", timestamp: null, config: {} };
  const fragments: FragmentRanges = { base: 0, ranges: new Int32Array(1024), count: 0, contiguous: true, reused: 0 };
  let otherSinceFragment = false;
  const restParts: Uint8Array[] = [];
  let restLength = 0;
  while (wire.pos < bytes.length) {
    const fieldStart = wire.pos;
    const tag = wire.uint32();
    if (tag >>> 3 === F.manifestFragments && (tag & 7) === WIRE_LEN) {
      if (fragments.count === 0) {
        fragments.base = fieldStart;
        if (reuseRun(fragments, wire, reusedRun(wire.buf, fieldStart, previous), previous)) continue;
      } else if (otherSinceFragment) fragments.contiguous = false;
      const end = wire.lengthEnd();
      addRange(fragments, wire.pos, end);
      wire.pos = end;
    } else {
      if (tag >>> 3 === 0) throw wire.corrupt("field number 0");
      if (fragments.count > 0) otherSinceFragment = true;
      if (cleanupOnly) {
        // Most fields (the schema's, the writer's...) are skipped here: only the few read go through readCleanupField.
        if (CLEANUP_FIELDS.has(tag >>> 3)) readCleanupField(wire, tag, fields);
        else wire.skip(tag & 7);
        continue;
      }
      wire.skip(tag & 7);
      restParts.push(bytes.subarray(fieldStart, wire.pos));
      restLength += wire.pos - fieldStart;
    }
  }
  if (cleanupOnly) return { fragments, rest: fields };
  return { fragments, rest: decodeRest(restParts, restLength, uri) };
}

/** Takes the `reused` leading fragments of `previous` (their ranges, the wire past them); false when there are none. */
function reuseRun(fragments: FragmentRanges, wire: Wire, reused: number, previous: PreviousFragmentRun | null): boolean {
  if (reused === 0 || previous === null) return false;
  if (fragments.ranges.length < reused * 2) fragments.ranges = new Int32Array(reused * 4);
  fragments.ranges.set(previous.ranges.subarray(0, reused * 2));
  fragments.count = reused;
  fragments.reused = reused;
  wire.pos = fragments.base + previous.length;
  return true;
}

function addRange(fragments: FragmentRanges, start: number, end: number): void {
  const at = fragments.count * 2;
  if (at + 2 > fragments.ranges.length) {
    const grown = new Int32Array(fragments.ranges.length * 2);
    grown.set(fragments.ranges);
    fragments.ranges = grown;
  }
  fragments.ranges[at] = start - fragments.base;
  fragments.ranges[at + 1] = end - fragments.base;
  fragments.count++;
}

/** The fields other than fragments, decoded by protobufjs as one message. */
function decodeRest(restParts: Uint8Array[], restLength: number, uri: string): Record<string, unknown> {
  const restBytes = new Uint8Array(restLength);
  let offset = 0;
  for (const part of restParts) {
    restBytes.set(part, offset);
    offset += part.length;
  }
  try {
    return manifestType.decode(restBytes) as protobuf.Message & Record<string, unknown>;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new CorruptFileError(uri, `cannot decode the Manifest protobuf: ${reason}`, { cause: error });
  }
}

/** protobufjs decodes 64-bit fields as long.js values (checked in proto-messages.ts). */
interface Long {
  low: number;
  high: number;
}

type Long64 = Long | number | bigint;

function u64(value: unknown): bigint {
  if (typeof value === "number") return BigInt(value);
  if (typeof value === "bigint") return BigInt.asUintN(64, value);
  const long = value as Long;
  return (BigInt(long.high >>> 0) << 32n) | BigInt(long.low >>> 0);
}

function i64(value: unknown): bigint {
  if (typeof value === "number") return BigInt(value);
  if (typeof value === "bigint") return BigInt.asIntN(64, value);
  const long = value as Long;
  return BigInt.asIntN(64, (BigInt(long.high >>> 0) << 32n) | BigInt(long.low >>> 0));
}

function u64Safe(value: unknown, what: string, uri: string): number {
  if (typeof value === "number") return value;
  if (typeof value === "bigint") {
    const big = BigInt.asUintN(64, value);
    if (big > MAX_SAFE) throw new CorruptFileError(uri, `${what} ${big} is beyond the safe integer range (2^53 - 1)`);
    return Number(big);
  }
  const long = value as Long;
  if (long.high === 0) return long.low >>> 0;
  const big = u64(long);
  if (big > MAX_SAFE) throw new CorruptFileError(uri, `${what} ${big} is beyond the safe integer range (2^53 - 1)`);
  return Number(big);
}

function has(message: object, name: string): boolean {
  return Object.hasOwn(message, name) && (message as Record<string, unknown>)[name] != null;
}

function decodeWith(type: protobuf.Type, bytes: Uint8Array, uri: string): protobuf.Message & Record<string, unknown> {
  try {
    return type.decode(bytes) as protobuf.Message & Record<string, unknown>;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new CorruptFileError(uri, `cannot decode the ${type.name} protobuf: ${reason}`, { cause: error });
  }
}

function toTransaction(message: Record<string, unknown>, uri: string): LanceTransaction {
  return {
    uuid: message.uuid as string,
    readVersion: u64Safe(message.read_version, "transaction read_version", uri),
    operation: operationName(message.operation as string | undefined),
    properties: { ...(message.transaction_properties as Record<string, string>) },
  };
}

/** A transaction (inline section or `_transactions/` file) without `toObject`. */
export function decodeLanceTransaction(bytes: Uint8Array, uri: string): LanceTransaction {
  return toTransaction(readTransactionFields(bytes, uri), uri);
}

function toIndices(bytes: Uint8Array, uri: string): LanceIndex[] {
  const section = decodeWith(indexSectionType, bytes, uri);
  return (section.indices as Record<string, unknown>[]).map((index) => {
    const name = index.name as string;
    const uuid = index.uuid as { uuid: Uint8Array } | null;
    if (!uuid) throw new CorruptFileError(uri, `index ${JSON.stringify(name)} has no uuid`);
    return {
      uuid: formatUuid(uuid.uuid, uri),
      name,
      fields: [...(index.fields as number[])],
      datasetVersion: u64Safe(index.dataset_version, `index ${JSON.stringify(name)} dataset_version`, uri),
      baseId: has(index, "base_id") ? (index.base_id as number) : null,
      files: ((index.files as Record<string, unknown>[] | undefined) ?? []).map((file) => ({
        path: file.path as string,
        sizeBytes: u64Safe(file.size_bytes, `index ${JSON.stringify(name)} file size`, uri),
      })),
    };
  });
}

/** The manifest's top-level header fields and sections: everything except the fragments. */
interface ManifestHead {
  rest: Record<string, unknown>;
  version: number;
  timestampNanos: bigint;
  transactionFile: string | null;
  indices: LanceIndex[];
  inlineTransaction: LanceTransaction | null;
  fragments: FragmentRanges;
  /** A cursor over the Manifest message, for its fragments (made once: a Buffer view is costly to make in a cold process). */
  wire: Wire;
}

function readManifestHead(bytes: Uint8Array, uri: string, cleanupOnly = false, previous: PreviousFragmentRun | null = null): ManifestHead {
  const { footer, manifestBytes } = manifestMessageBytes(bytes, uri);
  const wire = new Wire(manifestBytes, 0, manifestBytes.length, uri);
  const { fragments, rest } = splitManifest(wire, uri, cleanupOnly, previous);
  assertReadable(u64(rest.reader_feature_flags), uri);
  const sectionOffset = (name: string, what: string): number | null => (has(rest, name) ? u64Safe(rest[name], `${what} offset`, uri) : null);
  const indexOffset = sectionOffset("index_section", "index section");
  const transactionOffset = sectionOffset("transaction_section", "transaction section");
  const indices = indexOffset === null ? [] : toIndices(sectionAt(bytes, indexOffset, footer.manifestPos, "index section", uri), uri);
  const inlineTransaction = transactionOffset === null ? null : decodeLanceTransaction(sectionAt(bytes, transactionOffset, footer.manifestPos, "transaction section", uri), uri);
  const timestamp = rest.timestamp as { seconds: Long64; nanos: number } | null;
  const transactionFile = rest.transaction_file as string;
  return {
    rest,
    version: u64Safe(rest.version, "manifest version", uri),
    timestampNanos: timestamp ? i64(timestamp.seconds) * 1_000_000_000n + BigInt(timestamp.nanos) : 0n,
    transactionFile: transactionFile === "" ? null : transactionFile,
    indices,
    inlineTransaction,
    fragments,
    wire,
  };
}

export interface DecodedLanceManifestFile {
  manifest: LanceManifest;
  /** The inline transaction; null when the manifest has none (it may then name a transaction file). */
  inlineTransaction: LanceTransaction | null;
}

/** A whole manifest file → LanceManifest; equal to `toLanceManifest(decodeManifestFile(bytes))`. */
export function decodeLanceManifestFile(bytes: Uint8Array, uri: string): DecodedLanceManifestFile {
  const head = readManifestHead(bytes, uri);
  const { rest } = head;
  const { wire } = head;
  const { base, ranges, count } = head.fragments;
  const fragments: LanceFragment[] = new Array(count);
  for (let i = 0; i < count; i++) {
    wire.pos = base + ranges[i * 2]!;
    fragments[i] = toFragment(readRawFragment(wire, base + ranges[i * 2 + 1]!), uri);
  }
  const writer = rest.writer_version as { library: string; version: string } | null;
  const dataFormat = rest.data_format as { file_format: string; version: string } | null;
  const manifest: LanceManifest = {
    version: head.version,
    timestampNanos: head.timestampNanos,
    fields: (rest.fields as Record<string, unknown>[]).map((field) => ({
      id: field.id as number,
      parentId: field.parent_id as number,
      name: field.name as string,
      logicalType: field.logical_type as string,
      nullable: field.nullable as boolean,
    })),
    fragments,
    indices: head.indices,
    transactionFile: head.transactionFile,
    readerFeatureFlags: u64(rest.reader_feature_flags),
    writerFeatureFlags: u64(rest.writer_feature_flags),
    config: { ...(rest.config as Record<string, string>) },
    tableMetadata: { ...(rest.table_metadata as Record<string, string>) },
    branch: has(rest, "branch") ? (rest.branch as string) : null,
    basePaths: (rest.base_paths as Record<string, unknown>[]).map((base) => ({
      id: base.id as number,
      name: has(base, "name") ? (base.name as string) : null,
      isDatasetRoot: base.is_dataset_root as boolean,
      path: base.path as string,
    })),
    maxFragmentId: has(rest, "max_fragment_id") ? (rest.max_fragment_id as number) : null,
    nextRowId: u64(rest.next_row_id),
    writerVersion: writer ? { library: writer.library, version: writer.version } : null,
    dataFormat: dataFormat ? { fileFormat: dataFormat.file_format, version: dataFormat.version } : null,
  };
  return { manifest, inlineTransaction: head.inlineTransaction };
}

/** What cleanup and the version history need of one version, and nothing else. */
export interface LanceCleanupView {
  version: number;
  timestampNanos: bigint;
  totals: VersionTotals;
  /** Root-relative keys of every file the version references (as snapshot-files.ts `referencedFiles`); made from `sequence` when first read. */
  references: FileReference[];
  /** The same references as a run of fragment shares held with the versions decoded after it (no list per version). */
  sequence: ReferenceSequence;
  /** Paths the version names that are not keys under the root. */
  unresolved: UnresolvedReference[];
  config: Record<string, string>;
  /** null = main. */
  branch: string | null;
  transactionFile: string | null;
  inlineTransaction: LanceTransaction | null;
}

/** One fragment's share of a version: its references and its part of the totals. */
interface FragmentShare {
  references: FileReference[];
  unresolved: UnresolvedReference[];
  dataFiles: number;
  filesSize: number;
  deletionFiles: number;
  deletionRows: number;
  rows: number;
}

/**
 * Fragment shares by the fragment's exact wire bytes. Consecutive versions of a table share
 * most fragments, byte for byte: a fragment seen in an earlier manifest is neither decoded
 * nor validated again, and its FileReference objects are shared between the versions that
 * hold them. Looked up by a hash of the fragment's length and first bytes (its id), then
 * compared byte for byte in place: no string or copy is made for a fragment seen before (a
 * scan meets each fragment once per version holding it). Bounded: cleared when it grows past
 * `limit` entries.
 */
export class FragmentCache {
  readonly #buckets = new Map<number, { bytes: Buffer; share: FragmentShare }[]>();
  #size = 0;
  readonly limit: number;
  /** The manifest decoded last: its bytes, its fragments' ranges (relative to its first fragment's tag) and what they add up to. */
  #last: { buf: Buffer; base: number; fragments: FragmentRanges; shares: ShareRun } | null = null;
  constructor(limit = 500_000) {
    this.limit = limit;
  }

  /** The fragment run of the manifest decoded last, for splitManifest to take whole when it starts this one. */
  previousRun(): PreviousFragmentRun | null {
    const last = this.#last;
    if (last === null || last.fragments.count === 0 || !last.fragments.contiguous) return null;
    const { ranges, count } = last.fragments;
    return { buf: last.buf, start: last.base, length: ranges[count * 2 - 1]!, ranges, count };
  }

  /**
   * How many leading fragments of this manifest are, byte for byte, those of the manifest
   * decoded last (their shares are then the first of `takeSharedRun()`), when splitManifest could
   * not take the whole run: the ranges must line up exactly, and every byte from the first
   * fragment's tag to the end of the run (the fragments and the tags between them) must be equal.
   */
  sharedPrefix(buf: Buffer, fragments: FragmentRanges): number {
    const last = this.#last;
    const { base, ranges, count } = fragments;
    if (last === null || count === 0 || last.fragments.count === 0) return 0;
    const lastRanges = last.fragments.ranges;
    const max = Math.min(count, last.fragments.count);
    let shared = 0;
    while (shared < max && ranges[shared * 2] === lastRanges[shared * 2] && ranges[shared * 2 + 1] === lastRanges[shared * 2 + 1]) shared++;
    if (shared === 0) return 0;
    const length = ranges[shared * 2 - 1]!;
    return buf.compare(last.buf, last.base, last.base + length, base, base + length) === 0 ? shared : 0;
  }

  /**
   * The shares of the manifest decoded last (valid for a `sharedPrefix` or a run splitManifest
   * took), handed over: the next version's run grows from them in place, and the cache forgets
   * them until `remember` (a decode that fails midway leaves nothing half-grown to reuse).
   */
  takeSharedRun(): ShareRun | null {
    const shares = this.#last?.shares ?? null;
    this.#last = null;
    return shares;
  }

  /** Remembers a decoded manifest for the next one (its bytes are kept, not copied: they are not written to). */
  remember(buf: Buffer, fragments: FragmentRanges, shares: ShareRun): void {
    this.#last = { buf, base: fragments.base, fragments, shares };
  }
  /** The share of the fragment whose wire bytes are `buf[start, end)`, if seen. */
  lookup(buf: Buffer, start: number, end: number): FragmentShare | undefined {
    const bucket = this.#buckets.get(bytesHash(buf, start, end));
    if (!bucket) return undefined;
    for (const entry of bucket) {
      if (entry.bytes.length === end - start && buf.compare(entry.bytes, 0, entry.bytes.length, start, end) === 0) return entry.share;
    }
    return undefined;
  }
  store(buf: Buffer, start: number, end: number, share: FragmentShare): void {
    if (this.#size >= this.limit) {
      this.#buckets.clear();
      this.#size = 0;
    }
    const hash = bytesHash(buf, start, end);
    const entry = { bytes: Buffer.from(buf.subarray(start, end)), share };
    const bucket = this.#buckets.get(hash);
    if (bucket) bucket.push(entry);
    else this.#buckets.set(hash, [entry]);
    this.#size++;
  }
  get size(): number {
    return this.#size;
  }
}

/**
 * A version's fragment shares in order, with their totals summed. The next version takes this one
 * over when it repeats all its fragments (no step per fragment: ~50K steps for 331 versions of up
 * to 300 fragments, most of them before the code is optimised), or starts from its first few.
 */
class ShareRun {
  shares: FragmentShare[] = [];
  unresolved: UnresolvedReference[] = [];
  dataFiles = 0;
  filesSize = 0;
  deletionFiles = 0;
  deletionRows = 0;
  rows = 0;

  /**
   * A run starting with the first `count` shares of `from`, which it may take over (`from` is
   * not used again). All of them: its arrays, grown in place, not copies. The shares below a
   * version's count never change, which is what lets its view keep them as its ReferenceSequence.
   */
  static prefixOf(from: ShareRun | null, count: number): ShareRun {
    const run = new ShareRun();
    if (from === null || count === 0) return run;
    if (count === from.shares.length) {
      run.shares = from.shares;
      run.unresolved = from.unresolved;
      run.dataFiles = from.dataFiles;
      run.filesSize = from.filesSize;
      run.deletionFiles = from.deletionFiles;
      run.deletionRows = from.deletionRows;
      run.rows = from.rows;
      return run;
    }
    for (let i = 0; i < count; i++) run.add(from.shares[i]!);
    return run;
  }

  add(share: FragmentShare): void {
    this.shares.push(share);
    for (let r = 0; r < share.unresolved.length; r++) this.unresolved.push(share.unresolved[r]!);
    this.dataFiles += share.dataFiles;
    this.filesSize += share.filesSize;
    this.deletionFiles += share.deletionFiles;
    this.deletionRows += share.deletionRows;
    this.rows += share.rows;
  }
}

/** FNV-1a over the length and the first 16 bytes: enough to tell fragments apart by their id. */
function bytesHash(buf: Buffer, start: number, end: number): number {
  let hash = Math.imul(0x811c9dc5 ^ (end - start), 0x01000193);
  const stop = Math.min(end, start + 16);
  for (let i = start; i < stop; i++) hash = Math.imul(hash ^ buf[i]!, 0x01000193);
  return hash >>> 0;
}

function fragmentShare(raw: RawFragment, uri: string, tableUri: string): FragmentShare {
  const fragment = toFragment(raw, uri);
  const references: FileReference[] = [];
  const unresolved: UnresolvedReference[] = [];
  let filesSize = 0;
  for (const file of fragment.files) {
    filesSize += file.sizeBytes;
    if (file.baseId !== null) continue;
    const resolved = resolveUnder(DATA_PREFIX, file.path, tableUri);
    if (!("key" in resolved)) {
      unresolved.push(resolved);
      continue;
    }
    const entry: FileReference = { path: resolved.key, role: "data" };
    if (file.sizeBytes > 0) entry.size = file.sizeBytes;
    references.push(entry);
  }
  const deletion = fragment.deletionFile;
  if (deletion && deletion.baseId === null) {
    // Built from numbers only, so it cannot escape the root.
    references.push({
      path: `${DELETIONS_PREFIX}${fragment.id}-${deletion.readVersion}-${deletion.id}.${deletion.suffix}`,
      role: "delete",
    });
  }
  let rows = 0;
  if (fragment.physicalRows !== null) {
    if (!deletion) rows = fragment.physicalRows;
    else if (deletion.numDeletedRows !== null) rows = fragment.physicalRows - deletion.numDeletedRows;
  }
  return {
    references,
    unresolved,
    dataFiles: fragment.files.length,
    filesSize,
    deletionFiles: deletion ? 1 : 0,
    deletionRows: deletion?.numDeletedRows ?? 0,
    rows,
  };
}

/**
 * Only what cleanup needs of a manifest file: the totals of the version record, the
 * referenced files, the config (no live files, no schema, no raw bytes). Equal to
 * summarizeManifest / referencedFiles / config of the full decoding.
 */
export function decodeLanceCleanupView(bytes: Uint8Array, uri: string, tableUri: string, cache?: FragmentCache): LanceCleanupView {
  const head = readManifestHead(bytes, uri, true, cache?.previousRun() ?? null);
  const { rest, wire, fragments } = head;
  const shared = fragments.reused > 0 ? fragments.reused : cache ? cache.sharedPrefix(wire.buf, fragments) : 0;
  const run = ShareRun.prefixOf(cache?.takeSharedRun() ?? null, shared);
  for (let i = shared; i < fragments.count; i++)
    run.add(shareOf(wire, fragments.base + fragments.ranges[i * 2]!, fragments.base + fragments.ranges[i * 2 + 1]!, uri, tableUri, cache));
  cache?.remember(wire.buf, fragments, run);
  // The run's shares as they are now (the next version may grow the array, never change these); a copy of
  // the unresolved ones: the run is the next version's start, and a caller may add to what it is given.
  const extra: FileReference[] = [];
  const unresolved = run.unresolved.slice();
  for (const index of head.indices) {
    if (index.baseId === null && indexOwnsFolder(index.name)) extra.push(...indexReferences(index, tableUri, unresolved));
  }
  if (head.transactionFile !== null) {
    const resolved = resolveUnder(TRANSACTIONS_PREFIX, head.transactionFile, tableUri);
    if ("key" in resolved) extra.push({ path: resolved.key, role: "transaction" });
    else unresolved.push(resolved);
  }
  return new SequenceCleanupView({
    sequence: { chunks: run.shares, count: run.shares.length, extra },
    version: head.version,
    timestampNanos: head.timestampNanos,
    totals: {
      total_fragments: fragments.count,
      total_data_files: run.dataFiles,
      total_files_size: run.filesSize,
      total_deletion_files: run.deletionFiles,
      total_data_file_rows: run.rows + run.deletionRows,
      total_deletion_file_rows: run.deletionRows,
      total_rows: run.rows,
    },
    unresolved,
    config: { ...(rest.config as Record<string, string>) },
    branch: has(rest, "branch") ? (rest.branch as string) : null,
    transactionFile: head.transactionFile,
    inlineTransaction: head.inlineTransaction,
  });
}

/** A cleanup view whose list of references is made from its sequence when first read (cleanup reads the sequence; a head, the list). */
class SequenceCleanupView implements LanceCleanupView {
  readonly version: number;
  readonly timestampNanos: bigint;
  readonly totals: VersionTotals;
  readonly sequence: ReferenceSequence;
  readonly unresolved: UnresolvedReference[];
  readonly config: Record<string, string>;
  readonly branch: string | null;
  readonly transactionFile: string | null;
  readonly inlineTransaction: LanceTransaction | null;
  #references: FileReference[] | null = null;

  constructor(fields: Omit<LanceCleanupView, "references">) {
    this.version = fields.version;
    this.timestampNanos = fields.timestampNanos;
    this.totals = fields.totals;
    this.sequence = fields.sequence;
    this.unresolved = fields.unresolved;
    this.config = fields.config;
    this.branch = fields.branch;
    this.transactionFile = fields.transactionFile;
    this.inlineTransaction = fields.inlineTransaction;
  }

  get references(): FileReference[] {
    this.#references ??= listOf(this.sequence);
    return this.#references;
  }
}

/** A sequence's references as one list, in order. */
function listOf(sequence: ReferenceSequence): FileReference[] {
  const list: FileReference[] = [];
  for (let c = 0; c < sequence.count; c++) {
    const references = sequence.chunks[c]!.references;
    for (let r = 0; r < references.length; r++) list.push(references[r]!);
  }
  for (const reference of sequence.extra) list.push(reference);
  return list;
}

/** The share of the fragment at `buf[start, end)`: from the cache when seen in an earlier version, else decoded (and remembered). */
function shareOf(wire: Wire, start: number, end: number, uri: string, tableUri: string, cache: FragmentCache | undefined): FragmentShare {
  const known = cache?.lookup(wire.buf, start, end);
  if (known) return known;
  wire.pos = start;
  const share = fragmentShare(readRawFragment(wire, end), uri, tableUri);
  cache?.store(wire.buf, start, end, share);
  return share;
}
