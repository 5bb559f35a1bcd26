/**
 * The S3 XML the small client reads and writes: ListObjectsV2 and DeleteObjects results, error
 * bodies, and the DeleteObjects request. List pages are read by a scan (xml-scan.ts); the rest
 * by @rgrove/parse-xml (a conforming XML 1.0
 * parser, 14 KiB minified, no dependencies) rather than fast-xml-parser, which the SDK uses:
 * version 5 adds 63 KiB minified to a bundle, more than the rest of the client (measured with
 * esbuild 0.28, bench/results/bundle-sizes.md).
 */
import { parseXml, type XmlElement } from "@rgrove/parse-xml";
import { scanXml } from "./xml-scan.ts";

export interface ListedObject {
  key: string;
  size: number;
  etag: string;
  lastModified: Date;
}

export interface ListPage {
  contents: ListedObject[];
  commonPrefixes: string[];
  isTruncated: boolean;
  nextContinuationToken: string | undefined;
}

export interface DeleteError {
  key: string;
  code: string;
  message: string;
}

function rootOf(xml: string, expected: string): XmlElement {
  const root = parseXml(xml).root;
  if (!root || root.name !== expected) throw new Error(`S3 answered with XML that is not a ${expected} (root element ${root?.name ?? "missing"})`);
  return root;
}

function elements(parent: XmlElement, name: string): XmlElement[] {
  return parent.children.filter((child): child is XmlElement => child.type === "element" && (child as XmlElement).name === name);
}

function textOf(parent: XmlElement, name: string): string | undefined {
  return elements(parent, name)[0]?.text;
}

/**
 * A ListObjectsV2 result; keys and prefixes decoded when the answer says it URL-encoded them
 * (encoding-type=url). Read with the scan of xml-scan.ts, not a tree: a cleanup lists every file of
 * the table, a page of 1,000 at a time. Each field is the first of its name among its element's
 * children; a field that holds elements is refused (S3 never sends one).
 */
export function parseListPage(xml: string): ListPage {
  const root: Record<string, string> = {};
  const contents: Record<string, string>[] = [];
  const prefixes: Record<string, string>[] = [];
  let entry: Record<string, string> = {};
  let rootName: string | undefined;
  scanXml(xml, ({ depth, name, text }) => {
    if (depth === 1) rootName = name;
    else if (depth === 2) {
      if (name === "Contents") contents.push(entry);
      else if (name === "CommonPrefixes") prefixes.push(entry);
      else if (LIST_FIELDS.has(name)) firstOf(root, name, text);
      entry = {};
    } else if (depth === 3 && ENTRY_FIELDS.has(name)) firstOf(entry, name, text);
  });
  if (rootName !== "ListBucketResult") throw new Error(`S3 answered with XML that is not a ListBucketResult (root element ${rootName ?? "missing"})`);
  // S3 encodes as a form does: "+" is a space, a literal "+" is %2B.
  const decode = root.EncodingType === "url" ? (text: string) => decodeURIComponent(text.replace(/\+/g, " ")) : (text: string) => text;
  return {
    contents: contents.map((fields) => ({
      key: decode(fields.Key ?? ""),
      size: Number(fields.Size ?? 0),
      etag: fields.ETag ?? "",
      lastModified: new Date(fields.LastModified ?? 0),
    })),
    commonPrefixes: prefixes.map((fields) => decode(fields.Prefix ?? "")),
    isTruncated: root.IsTruncated === "true",
    nextContinuationToken: root.NextContinuationToken,
  };
}

/** The fields of a ListBucketResult, and of its Contents and CommonPrefixes, that a page is read from. */
const LIST_FIELDS: ReadonlySet<string> = new Set(["EncodingType", "IsTruncated", "NextContinuationToken"]);
const ENTRY_FIELDS: ReadonlySet<string> = new Set(["Key", "Size", "ETag", "LastModified", "Prefix"]);

function firstOf(fields: Record<string, string>, name: string, text: string | null): void {
  if (text === null) throw new Error(`S3 answered with a ListBucketResult whose <${name}> holds elements`);
  if (!(name in fields)) fields[name] = text;
}

/** The per-key failures of a quiet DeleteObjects (the keys it names are full keys, not URL-encoded). */
export function parseDeleteErrors(xml: string): DeleteError[] {
  const root = rootOf(xml, "DeleteResult");
  return elements(root, "Error").map((entry) => ({ key: textOf(entry, "Key") ?? "", code: textOf(entry, "Code") ?? "", message: textOf(entry, "Message") ?? "" }));
}

/** The Code and Message of an error body, or undefined when the body is empty (HEAD) or not S3's error XML. */
export function parseErrorBody(xml: string): { code: string; message: string } | undefined {
  if (xml.trim() === "") return undefined;
  try {
    const root = rootOf(xml, "Error");
    return { code: textOf(root, "Code") ?? "", message: textOf(root, "Message") ?? "" };
  } catch {
    return undefined;
  }
}

const XML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;", "\r": "&#13;", "\n": "&#10;", "\t": "&#9;" };

/** A quiet DeleteObjects request body for these full keys. */
export function deleteRequestXml(keys: readonly string[]): string {
  const objects = keys.map((key) => `<Object><Key>${key.replace(/[&<>"'\r\n\t]/g, (c) => XML_ESCAPES[c]!)}</Key></Object>`).join("");
  return `<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Quiet>true</Quiet>${objects}</Delete>`;
}
