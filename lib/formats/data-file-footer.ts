/**
 * The tail of a data file that a reader needs before it can read any row (Lance: schema
 * buffer, column metadata, offset tables and footer). Data files never change once written,
 * so a footer read once can be inlined in the head and reused by every later head.
 */
import type { ObjectStore } from "../store/object-store.ts";

export interface DataFileFooter {
  /** Data file key relative to the table root. */
  path: string;
  /** Size of the whole data file in bytes. */
  fileSize: number;
  /** Where `bytes` start in the file; `bytes` run to its end. */
  offset: number;
  bytes: Uint8Array;
}

/** Reads one data file's footer; throws a TableFormatError naming the file when it is not one. */
export type DataFileFooterReader = (store: ObjectStore, path: string) => Promise<DataFileFooter>;
