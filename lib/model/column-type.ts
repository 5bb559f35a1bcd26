/**
 * The closed set of column types the head model and the checkpoint codec hold, and the JS value
 * of each: shared by the head's codecs and the Arrow column buffers (lib/arrow) below both.
 */
export type ColumnType = "utf8" | "int64" | "float64" | "bool" | "binary" | "utf8_list";

/** The JS value each column type holds; every column is nullable. */
export interface ColumnValueOf {
  utf8: string;
  /** Integers within Number.MAX_SAFE_INTEGER; codecs refuse anything else instead of rounding. */
  int64: number;
  float64: number;
  bool: boolean;
  binary: Uint8Array;
  utf8_list: string[];
}
