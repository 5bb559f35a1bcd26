/**
 * Whether bytes are a whole Arrow IPC file as far as its metadata tells, without decoding a
 * body: "ARROW1" at both ends; the footer (its length in range) decodes whole: the schema with
 * its fields, at least one record batch block; each block (offset, metadata, body) lies before
 * the footer, and the message it points at is a record batch (or dictionary batch) whose
 * metadata decodes whole and whose body, and every buffer in it, lies inside the file.
 *
 * Not apache-arrow's RecordBatchFileReader: a cleanup that proves a Lance deletion file would
 * load, parse and compile the library's reader (a large chunk) for one footer, inside its clock;
 * and that reader does not look at where the blocks point (a block past the end opened fine).
 */
import { FlatBufferDamage, FlatReader, type FlatTableView } from "./flat-reader.ts";

const MAGIC = [0x41, 0x52, 0x52, 0x4f, 0x57, 0x31]; // "ARROW1"
/** Magic and its 2 bytes of padding at the start; the footer's int32 length and the magic at the end. */
const LEAD_BYTES = 8;
const TAIL_BYTES = 4 + MAGIC.length;
const BLOCK_BYTES = 24;
const CONTINUATION = 0xffffffff;
const HEADER_DICTIONARY_BATCH = 2;
const HEADER_RECORD_BATCH = 3;
/** Arrow's Type union: NONE is 0; the last member of format version V5 is 26 (LargeListView). */
const LAST_TYPE_ID = 26;
/** Fields nest far less deep in any schema a table format writes; deeper is taken as damage. */
const MAX_FIELD_DEPTH = 64;

/** Null when whole, else what is wrong in one line. */
export function checkIpcFile(bytes: Uint8Array): string | null {
  const size = bytes.length;
  if (size < LEAD_BYTES + TAIL_BYTES || !hasMagic(bytes, 0) || !hasMagic(bytes, size - MAGIC.length)) return "not an Arrow IPC file: no ARROW1 magic at both ends";
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const footerEnd = size - TAIL_BYTES;
  const footerLength = view.getInt32(footerEnd, true);
  const footerStart = footerEnd - footerLength;
  if (footerLength <= 0 || footerStart < LEAD_BYTES) return `damaged Arrow file: its footer length ${footerLength} does not fit its ${size} bytes`;
  try {
    const footer = new FlatReader(bytes.subarray(footerStart, footerEnd));
    const root = footer.root("the footer");
    const schema = root.table(1, "the footer's schema");
    if (!schema) return "damaged Arrow file: no schema in its footer";
    checkFields(schema.tables(1, "schema field") ?? [], 0);
    checkKeyValues(schema, 2);
    const batches = root.structs(3, BLOCK_BYTES, "the record batch blocks");
    if (!batches || batches.length === 0) return "damaged Arrow file: its footer names no record batch";
    const dictionaries = root.structs(2, BLOCK_BYTES, "the dictionary blocks");
    const file = { bytes, view, footerStart };
    for (let i = 0; i < (dictionaries?.length ?? 0); i++) checkBlock(file, footer, dictionaries!.start + BLOCK_BYTES * i, HEADER_DICTIONARY_BATCH, `dictionary batch ${i}`);
    for (let i = 0; i < batches.length; i++) checkBlock(file, footer, batches.start + BLOCK_BYTES * i, HEADER_RECORD_BATCH, `record batch ${i}`);
    return null;
  } catch (error) {
    if (error instanceof FlatBufferDamage) return `damaged Arrow file: ${error.message}`;
    throw error;
  }
}

function hasMagic(bytes: Uint8Array, at: number): boolean {
  return MAGIC.every((byte, i) => bytes[at + i] === byte);
}

function checkFields(fields: readonly FlatTableView[], depth: number): void {
  if (depth > MAX_FIELD_DEPTH) throw new FlatBufferDamage(`its schema nests fields deeper than ${MAX_FIELD_DEPTH}`);
  for (const field of fields) {
    field.string(0, `${field.what}'s name`);
    const typeId = field.u8(2, 0);
    if (typeId < 1 || typeId > LAST_TYPE_ID) throw new FlatBufferDamage(`${field.what} has no type Arrow defines (type id ${typeId})`);
    if (!field.table(3, `${field.what}'s type`)) throw new FlatBufferDamage(`${field.what} has no type`);
    const dictionary = field.table(4, `${field.what}'s dictionary encoding`);
    dictionary?.table(1, `${field.what}'s dictionary index type`);
    checkKeyValues(field, 6);
    checkFields(field.tables(5, `${field.what}'s child`) ?? [], depth + 1);
  }
}

/** A schema's or a field's custom metadata (field `id` of the table): key and value strings. */
function checkKeyValues(table: FlatTableView, id: number): void {
  for (const pair of table.tables(id, `${table.what}'s metadata`) ?? []) {
    pair.string(0, `${pair.what}'s key`);
    pair.string(1, `${pair.what}'s value`);
  }
}

interface IpcFile {
  bytes: Uint8Array;
  view: DataView;
  footerStart: number;
}

/** A Block { offset, metaDataLength, bodyLength } and the message it points at. */
function checkBlock(file: IpcFile, footer: FlatReader, at: number, headerType: number, what: string): void {
  const offset = footer.i64(at);
  const metadataLength = footer.i32(at + 8);
  const bodyLength = footer.i64(at + 16);
  if (!(offset >= LEAD_BYTES && metadataLength >= 8 && bodyLength >= 0 && offset + metadataLength + bodyLength <= file.footerStart)) {
    throw new FlatBufferDamage(
      `${what}'s block (offset ${offset}, metadata ${metadataLength}, body ${bodyLength} bytes) lies outside the file's ${file.footerStart} bytes before its footer`,
    );
  }
  // An encapsulated message: the continuation marker (absent before Arrow 0.15), its length, the Message.
  const prefix = file.view.getUint32(offset, true) === CONTINUATION ? 8 : 4;
  const flatLength = file.view.getInt32(offset + prefix - 4, true);
  if (flatLength <= 0 || prefix + flatLength > metadataLength) throw new FlatBufferDamage(`${what}'s message of ${flatLength} bytes does not fit its block's ${metadataLength}`);
  const message = new FlatReader(file.bytes.subarray(offset + prefix, offset + prefix + flatLength)).root(`${what}'s message`);
  if (message.u8(1, 0) !== headerType) throw new FlatBufferDamage(`${what}'s message is not a ${what.replace(/ \d+$/, "")}`);
  const header = message.table(2, `${what}'s header`);
  if (!header) throw new FlatBufferDamage(`${what}'s message has no header`);
  const messageBody = message.i64(3, 0);
  if (!(messageBody >= 0 && offset + prefix + flatLength + messageBody <= file.footerStart))
    throw new FlatBufferDamage(`${what}'s body of ${messageBody} bytes lies past the file's end`);
  const batch = headerType === HEADER_RECORD_BATCH ? header : header.table(1, `${what}'s data`);
  if (batch) checkBuffers(batch, messageBody, what);
}

/** A RecordBatch { length, nodes, buffers, compression }: each Buffer { offset, length } inside the body. */
function checkBuffers(batch: FlatTableView, bodyLength: number, what: string): void {
  batch.structs(1, 16, `${what}'s field nodes`);
  batch.table(3, `${what}'s compression`);
  const buffers = batch.structs(2, 16, `${what}'s buffers`);
  for (let i = 0; i < (buffers?.length ?? 0); i++) {
    const at = buffers!.start + 16 * i;
    const start = batch.reader.i64(at);
    const length = batch.reader.i64(at + 8);
    if (!(start >= 0 && length >= 0 && start + length <= bodyLength))
      throw new FlatBufferDamage(`${what}'s buffer ${i} (at ${start}, ${length} bytes) lies outside its ${bodyLength}-byte body`);
  }
}
