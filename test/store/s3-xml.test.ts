/**
 * parseListPage reads ListObjectsV2 answers with a scan (lib/store/xml-scan.ts), not a tree. Its
 * oracle here is the tree a conforming XML parser (@rgrove/parse-xml, which reads every other S3
 * answer) gives for the same text, read field by field as parseListPage read it before: on pages
 * written as S3, moto and fauxqs write them (compact or indented, owners, checksums, restore
 * status, URL-encoded or escaped keys, CDATA, comments), both must give the same page, and on
 * malformed text both must refuse.
 */
import { parseXml, type XmlElement } from "@rgrove/parse-xml";
import { describe, expect, it } from "vitest";
import { type ListPage, parseListPage } from "../../lib/store/s3-xml.ts";
import { scanXml } from "../../lib/store/xml-scan.ts";

/** parseListPage as it was, on the conforming parser's tree: the oracle. */
function listPageByTree(xml: string): ListPage {
  const root = parseXml(xml).root;
  if (!root || root.name !== "ListBucketResult") throw new Error("not a ListBucketResult");
  const elements = (parent: XmlElement, name: string) => parent.children.filter((child): child is XmlElement => child.type === "element" && (child as XmlElement).name === name);
  const textOf = (parent: XmlElement, name: string) => elements(parent, name)[0]?.text;
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

const escapeXml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
/** As S3 URL-encodes a key for encoding-type=url: a form's encoding, "+" for a space. */
const urlEncode = (key: string) => encodeURIComponent(key).replace(/%20/g, "+").replace(/%2F/g, "/");

interface PageSpec {
  keys: string[];
  prefixes?: string[];
  url?: boolean;
  truncated?: string;
  indent?: boolean;
  owner?: boolean;
}

/** A page as S3 writes one (indented as moto does when `indent`), every optional part S3 may add when asked. */
function page(spec: PageSpec): string {
  const nl = spec.indent ? "\n    " : "";
  const key = (k: string) => (spec.url ? urlEncode(k) : escapeXml(k));
  const contents = spec.keys.map(
    (k, i) =>
      `<Contents>${nl}<Key>${key(k)}</Key>${nl}<LastModified>2026-12-0${(i % 9) + 1}T10:2${i % 10}:33.${String(i % 1000).padStart(3, "0")}Z</LastModified>${nl}` +
      `<ETag>&quot;${(i * 7919).toString(16).padStart(32, "0")}&quot;</ETag>${nl}<ChecksumAlgorithm>CRC64NVME</ChecksumAlgorithm>${nl}<Size>${i * 131}</Size>${nl}` +
      (spec.owner ? `<Owner>${nl}<ID>75aa57f09aa0c8caeab4f8c24e99d10f8e7faeebf76c078efc7c6caea54ba06a</ID>${nl}<DisplayName>webfile</DisplayName>${nl}</Owner>${nl}` : "") +
      (i % 5 === 0 ? `<RestoreStatus><IsRestoreInProgress>false</IsRestoreInProgress></RestoreStatus>${nl}` : "") +
      `<StorageClass>STANDARD</StorageClass>${nl}</Contents>`,
  );
  const prefixes = (spec.prefixes ?? []).map((p) => `<CommonPrefixes>${nl}<Prefix>${key(p)}</Prefix>${nl}</CommonPrefixes>`);
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${nl}<Name>lake</Name>${nl}<Prefix>t.lance/data/</Prefix>${nl}` +
    `<KeyCount>${spec.keys.length}</KeyCount>${nl}<MaxKeys>1000</MaxKeys>${nl}${spec.url ? `<EncodingType>url</EncodingType>${nl}` : ""}` +
    `<IsTruncated>${spec.truncated !== undefined}</IsTruncated>${nl}` +
    (spec.truncated !== undefined ? `<NextContinuationToken>${escapeXml(spec.truncated)}</NextContinuationToken>${nl}` : "") +
    `${contents.join(nl)}${nl}${prefixes.join(nl)}\n</ListBucketResult>\n`
  );
}

const ODD_KEYS = [
  "data/0a1b2c3d-4e5f.lance",
  "_versions/18446744073709551614.manifest",
  "a b+c&d<e>f\"g'h",
  "naïve/ümlaut/日本語/😀.lance",
  "percent%2Fsigns%25and%20spaces",
  "tab\there",
  "]]>close",
  "semi;colon&amp;literal",
];

function randomKeys(count: number, seed: number): string[] {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state;
  };
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-_./ +&<>\"'%é漢😀";
  return Array.from({ length: count }, (_, i) => {
    const chars = Array.from({ length: 5 + (next() % 40) }, () => [...alphabet][next() % [...alphabet].length]).join("");
    return `data/${i}-${chars}`;
  });
}

describe("parseListPage: the scan reads what the conforming parser's tree holds", () => {
  const cases: [string, PageSpec][] = [
    ["a compact page of 1,000 URL-encoded keys", { keys: randomKeys(1000, 7), url: true }],
    ["an indented page, owners and restore status, escaped keys (no encoding-type)", { keys: [...ODD_KEYS, ...randomKeys(200, 11)], indent: true, owner: true }],
    [
      "URL-encoded odd keys and common prefixes, truncated",
      { keys: ODD_KEYS, prefixes: ["_refs/", "a b+/", "日本/"], url: true, truncated: "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=" },
    ],
    ["an empty page", { keys: [] }],
    ["only common prefixes, indented", { keys: [], prefixes: ["_transactions/", "_versions/"], indent: true, url: true }],
  ];
  it.each(cases)("%s", (_, spec) => {
    const xml = page(spec);
    const scanned = parseListPage(xml);
    expect(scanned).toEqual(listPageByTree(xml));
    expect(scanned.contents.map((c) => c.key)).toEqual(spec.keys);
    expect(scanned.commonPrefixes).toEqual(spec.prefixes ?? []);
  });

  it("reads CDATA, comments, character references and CR LF line ends as the tree does", () => {
    const xml =
      '<?xml version="1.0"?>\r\n<!-- a comment -->\r\n<ListBucketResult><!-- inside --><IsTruncated>true</IsTruncated><NextContinuationToken>a&#x2F;b&#47;c</NextContinuationToken>' +
      "<Contents><Key><![CDATA[x<y&z]]>-tail</Key><Size>12</Size><ETag>&quot;e&quot;</ETag><LastModified>2026-01-01T00:00:00.000Z</LastModified></Contents>" +
      "<Contents><Key>line\r\nend\rcr</Key><Size>0</Size><ETag/></Contents>" +
      '<Contents><Key attr="a>b">k&#128512;</Key><Key>second ignored</Key></Contents></ListBucketResult>';
    const scanned = parseListPage(xml);
    expect(scanned).toEqual(listPageByTree(xml));
    expect(scanned.contents.map((c) => c.key)).toEqual(["x<y&z-tail", "line\nend\ncr", "k😀"]);
    expect(scanned.nextContinuationToken).toBe("a/b/c");
  });

  it.each([
    ["another root", "<ListAllMyBucketsResult><Buckets/></ListAllMyBucketsResult>"],
    ["a tag closed by another", "<ListBucketResult><Contents><Key>k</Size></Contents></ListBucketResult>"],
    ["an unclosed root", "<ListBucketResult><Contents><Key>k</Key></Contents>"],
    ["an entity XML does not predefine", "<ListBucketResult><Contents><Key>&nbsp;</Key></Contents></ListBucketResult>"],
    ["a bare ampersand", "<ListBucketResult><Contents><Key>a & b</Key></Contents></ListBucketResult>"],
    ["text after the root", "<ListBucketResult></ListBucketResult>trailing"],
    ["two roots", "<ListBucketResult></ListBucketResult><ListBucketResult></ListBucketResult>"],
    ["a character reference to no XML character", "<ListBucketResult><Contents><Key>&#0;</Key></Contents></ListBucketResult>"],
    ["no XML at all", ""],
  ])("refuses %s, as the tree does", (_, xml) => {
    expect(() => listPageByTree(xml)).toThrow();
    expect(() => parseListPage(xml)).toThrow();
  });

  it("refuses a field that holds elements (the tree would read its text; S3 never sends one)", () => {
    expect(() => parseListPage("<ListBucketResult><Contents><Key><Part>a</Part></Key></Contents></ListBucketResult>")).toThrow(/holds elements/);
  });
});

describe("scanXml", () => {
  it("reports every element as it closes, children first, with its depth and a leaf's text", () => {
    const seen: string[] = [];
    scanXml('<a x="1"><b>t&amp;u</b><c/><d><e>v</e></d></a>', ({ depth, name, text }) => void seen.push(`${depth}:${name}:${text}`));
    expect(seen).toEqual(["2:b:t&u", "2:c:", "3:e:v", "2:d:null", "1:a:null"]);
  });
});
