/**
 * Errors about a table's content (as opposed to StoreError, about reaching it).
 * Each names the object (`uri`) and the problem in one line.
 */
export class TableFormatError extends Error {
  readonly uri: string;
  constructor(uri: string, problem: string, options?: { cause?: unknown }) {
    super(`${uri}: ${problem}`, options);
    this.name = new.target.name;
    this.uri = uri;
  }
}

/** The bytes are not a valid commit file (truncated, wrong magic, undecodable protobuf, ...). */
export class CorruptFileError extends TableFormatError {}

/** The table uses a feature this reader does not know; reading on could give wrong answers. */
export class UnsupportedFeatureError extends TableFormatError {}

/** The location holds no table of this format (no version files). */
export class NotATableError extends TableFormatError {}
