/** Parses store locations: `s3://bucket/prefix`, `file:///abs/dir`, or a local path. */
import { isAbsolute, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { InvalidLocationError } from "./errors.ts";
import { keyProblem } from "./keys.ts";

export type StoreLocation =
  | { kind: "s3"; bucket: string /** No leading or trailing "/"; "" for the whole bucket. */; prefix: string; uri: string }
  | { kind: "local" /** Absolute path. */; path: string; uri: string };

const EXPECTED = "expected s3://bucket/prefix, file:///absolute/dir or a local path";
// Single letters are Windows drive letters (C:\lake), not schemes.
const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]+):/;
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export function parseLocation(location: string): StoreLocation {
  if (typeof location !== "string" || location.trim() === "") {
    throw new InvalidLocationError(`empty location: ${EXPECTED}`, { uri: String(location) });
  }
  const scheme = SCHEME.exec(location)?.[1]?.toLowerCase();
  if (scheme === undefined) {
    const path = resolve(location);
    return { kind: "local", path, uri: pathToFileURL(path).href.replace(/\/$/, "") };
  }
  if (scheme === "s3") return parseS3(location);
  if (scheme === "file") return parseFileUrl(location);
  throw new InvalidLocationError(`${location}: unsupported scheme "${scheme}:", ${EXPECTED}`, { uri: location });
}

function parseS3(location: string): StoreLocation {
  const match = /^s3:\/\/([^/]*)(?:\/(.*))?$/i.exec(location);
  if (!match) throw new InvalidLocationError(`${location}: malformed S3 URI, expected s3://bucket/prefix`, { uri: location });
  const bucket = match[1] ?? "";
  if (bucket === "") throw new InvalidLocationError(`${location}: S3 URI has no bucket name, expected s3://bucket/prefix`, { uri: location });
  if (!BUCKET.test(bucket) || bucket.includes("..")) {
    throw new InvalidLocationError(`${location}: "${bucket}" is not a valid S3 bucket name (3-63 lowercase letters, digits, dots, hyphens)`, { uri: location });
  }
  const prefix = (match[2] ?? "").replace(/\/+$/, "");
  if (prefix !== "") {
    const problem = keyProblem(prefix);
    if (problem) throw new InvalidLocationError(`${location}: invalid S3 prefix: ${problem}`, { uri: location });
  }
  return { kind: "s3", bucket, prefix, uri: prefix ? `s3://${bucket}/${prefix}` : `s3://${bucket}` };
}

function parseFileUrl(location: string): StoreLocation {
  // A query or fragment is no part of a path: dropping it would run on a table the caller did not
  // name. An encoded `%3F` or `%23` is part of a folder's name and stays.
  const extra = /([?#])(.*)$/s.exec(location);
  if (extra) {
    const what = extra[1] === "?" ? "query" : "fragment";
    throw new InvalidLocationError(
      `${location}: file URI has a ${what} (${JSON.stringify(extra[0])}), which names no file; write ? as %3F and # as %23 if they are part of the path`,
      { uri: location },
    );
  }
  let path: string;
  try {
    path = fileURLToPath(location);
  } catch (err) {
    throw new InvalidLocationError(`${location}: malformed file URI (${(err as Error).message}), expected file:///absolute/dir`, {
      uri: location,
      cause: err,
    });
  }
  if (!isAbsolute(path)) throw new InvalidLocationError(`${location}: file URI must name an absolute path`, { uri: location });
  const resolved = resolve(path);
  return { kind: "local", path: resolved, uri: pathToFileURL(resolved).href.replace(/\/$/, "") };
}
