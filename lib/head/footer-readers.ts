/** Which data-file footer reader each format has; a format without one gets heads without footers. */
import type { DataFileFooterReader } from "../formats/data-file-footer.ts";
import { readLanceDataFileFooter } from "../formats/lance/data-file-footer.ts";

const READERS: Record<string, DataFileFooterReader> = {
  lance: readLanceDataFileFooter,
};

export function footerReaderFor(formatName: string): DataFileFooterReader | null {
  return READERS[formatName] ?? null;
}
