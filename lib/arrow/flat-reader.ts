/**
 * A FlatBuffers reader that trusts nothing it reads: every offset, vtable and vector is checked
 * to lie inside the buffer before it is followed, and the first that does not ends the read with
 * a FlatBufferDamage saying where. It reads the few Arrow IPC tables lakewarden checks itself
 * (ipc-file-check.ts), as flat-writer.ts writes the ones it writes.
 */

/** The one-line reason a FlatBuffer does not decode whole. */
export class FlatBufferDamage extends Error {}

export class FlatReader {
  readonly bytes: Uint8Array;
  private readonly view: DataView;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** Throws unless `length` bytes at `at` lie inside the buffer. */
  need(at: number, length: number, what: string): void {
    if (!(at >= 0 && length >= 0 && at + length <= this.bytes.length)) throw new FlatBufferDamage(`${what} lies outside its ${this.bytes.length}-byte buffer`);
  }

  u32(at: number, what: string): number {
    this.need(at, 4, what);
    return this.view.getUint32(at, true);
  }

  /** The 16-bit value at `at`, which the caller checked lies inside. */
  u16(at: number): number {
    return this.view.getUint16(at, true);
  }

  /** The buffer's root table. */
  root(what: string): FlatTableView {
    return this.tableAt(this.u32(0, `${what}'s root offset`), what);
  }

  tableAt(at: number, what: string): FlatTableView {
    this.need(at, 4, what);
    const vtable = at - this.view.getInt32(at, true);
    this.need(vtable, 4, `${what}'s vtable`);
    const vtableSize = this.view.getUint16(vtable, true);
    if (vtableSize < 4 || vtableSize % 2 !== 0) throw new FlatBufferDamage(`${what}'s vtable has an impossible size ${vtableSize}`);
    this.need(vtable, vtableSize, `${what}'s vtable`);
    return new FlatTableView(this, at, vtable, vtableSize, what);
  }

  /** A vector's first element and length, checked whole: `width` bytes an element. */
  vectorAt(at: number, width: number, what: string): { start: number; length: number } {
    const length = this.u32(at, `${what}'s length`);
    this.need(at + 4, length * width, what);
    return { start: at + 4, length };
  }

  /** The 32-bit value at `at`, which the caller checked lies inside. */
  i32(at: number): number {
    return this.view.getInt32(at, true);
  }

  /** The 64-bit value at `at`, which the caller checked lies inside (past 2^53 it is rounded, still past any file's size). */
  i64(at: number): number {
    return Number(this.view.getBigInt64(at, true));
  }
}

/** One table of a FlatReader's buffer; fields by their id in the schema. */
export class FlatTableView {
  readonly reader: FlatReader;
  private readonly at: number;
  private readonly vtable: number;
  private readonly vtableSize: number;
  readonly what: string;

  constructor(reader: FlatReader, at: number, vtable: number, vtableSize: number, what: string) {
    this.reader = reader;
    this.at = at;
    this.vtable = vtable;
    this.vtableSize = vtableSize;
    this.what = what;
  }

  /**
   * Where field `id` lies (checked to be `width` bytes inside the buffer), or null when absent.
   * As FlatBuffers' own verifier: a field inside the buffer, whatever the table's recorded size.
   */
  private field(id: number, width: number): number | null {
    const slot = 4 + 2 * id;
    if (slot + 2 > this.vtableSize) return null;
    const offset = this.reader.u16(this.vtable + slot);
    if (offset === 0) return null;
    this.reader.need(this.at + offset, width, `field ${id} of ${this.what}`);
    return this.at + offset;
  }

  private target(id: number, what: string): number | null {
    const at = this.field(id, 4);
    return at === null ? null : at + this.reader.u32(at, what);
  }

  u8(id: number, fallback: number): number {
    const at = this.field(id, 1);
    return at === null ? fallback : this.reader.bytes[at]!;
  }

  i64(id: number, fallback: number): number {
    const at = this.field(id, 8);
    return at === null ? fallback : this.reader.i64(at);
  }

  table(id: number, what: string): FlatTableView | null {
    const at = this.target(id, what);
    return at === null ? null : this.reader.tableAt(at, what);
  }

  /** A vector of tables, each checked to decode as a table. */
  tables(id: number, what: string): FlatTableView[] | null {
    const at = this.target(id, what);
    if (at === null) return null;
    const { start, length } = this.reader.vectorAt(at, 4, what);
    return Array.from({ length }, (_, i) => this.reader.tableAt(start + 4 * i + this.reader.u32(start + 4 * i, what), `${what} ${i}`));
  }

  /** A vector of structs `width` bytes each: where the first starts and how many. */
  structs(id: number, width: number, what: string): { start: number; length: number } | null {
    const at = this.target(id, what);
    return at === null ? null : this.reader.vectorAt(at, width, what);
  }

  /** A string's bytes, checked whole. */
  string(id: number, what: string): Uint8Array | null {
    const at = this.target(id, what);
    if (at === null) return null;
    const { start, length } = this.reader.vectorAt(at, 1, what);
    return this.reader.bytes.subarray(start, start + length);
  }
}
