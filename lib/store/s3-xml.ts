/**
 * The S3 XML the small client reads and writes: ListObjectsV2 and DeleteObjects results, error
 * bodies, and the DeleteObjects request. Parsing is @rgrove/parse-xml (a conforming XML 1.0
 * parser, 14 KiB minified, no dependencies) rather than fast-xml-parser, which the SDK uses:
 * version 5 adds 63 KiB minified to a bundle, more than the rest of the client (measured with
 * esbuild 0.28, bench/results/bundle-sizes.md).
 */
import { parseXml, type XmlElement } from "@rgrove/parse-xml";

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

/** A ListObjectsV2 result; keys and prefixes decoded when the answer says it URL-encoded them (encoding-type=url). */
export function parseListPage(xml: string): ListPage {
  const root = rootOf(xml, "ListBucketResult");
  // S3 encodes as a form does: "+" is a space, a literal "+" is %2B.
  const decode = textOf(root, "EncodingType") === "url" ? (text: string) => decodeURIComponent(text.replace(/\+/g, " ")) : (text: string) => text;
  return {
    contents: elements(root, "Contents").map((entry) => ({
      key: decode(textOf(entry, "Key") ?? ""),
      size: Number(textOf(entry, "Size") ?? 0),
      etag: textOf(entry, "ETag") ?? "",
      lastModified: new Date(textOf(entry, "LastModified") ?? 0),
    })),
    commonPrefixes: elements(root, "CommonPrefixes").map((entry) => decode(textOf(entry, "Prefix") ?? "")),
    isTruncated: textOf(root, "IsTruncated") === "true",
    nextContinuationToken: textOf(root, "NextContinuationToken"),
  };
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
