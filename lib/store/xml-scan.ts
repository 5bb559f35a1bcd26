/**
 * A scan of an XML document's elements without building its tree: each element is reported as it
 * closes, with its depth, its name and, when it holds no element, its text (entities decoded,
 * line ends normalised as XML 1.0 says). Well-formedness is checked as far as the scan goes:
 * tags nest and match, one root element, only whitespace, comments and processing instructions
 * around it, no entity XML does not predefine (S3 declares none); a document type declaration
 * is refused. Anything else throws, as a conforming parser would.
 *
 * Why not @rgrove/parse-xml (s3-xml.ts), which reads every other answer: a ListObjectsV2 page
 * is 1,000 entries of about 300 bytes, and a cleanup lists every file of the table. Building
 * that tree and checking every character against XML's name and text classes took most of the
 * CPU of listing 10,000 Lance files on S3; the scan reads the same answer several times faster.
 */

export interface ScannedElement {
  /** 1 for the root, 2 for its children, and so on. */
  depth: number;
  name: string;
  /** The element's character data when it holds no element (a leaf: the fields S3 answers with); null when it does. */
  text: string | null;
}

const PREDEFINED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

/** Calls `visit` for every element in document order of their ends (an element's children before it). */
export function scanXml(xml: string, visit: (element: ScannedElement) => void): void {
  const names: string[] = [];
  const texts: (string | null)[] = [];
  let rootSeen = false;
  let at = 0;
  for (;;) {
    const lt = xml.indexOf("<", at);
    const textEnd = lt === -1 ? xml.length : lt;
    if (textEnd > at) addText(names, texts, decodeText(xml.slice(at, textEnd)));
    if (lt === -1) break;
    const second = xml.charCodeAt(lt + 1);
    if (second === 0x3f /* ? */) at = endOf(xml, "?>", lt, "processing instruction");
    else if (second === 0x21 /* ! */) at = markupDeclaration(xml, lt, names, texts);
    else if (second === 0x2f /* / */) {
      const gt = xml.indexOf(">", lt);
      if (gt === -1) throw new Error("XML: an end tag is not closed");
      const name = xml.slice(lt + 2, gt).trimEnd();
      const open = names.pop();
      if (open !== name) throw new Error(`XML: </${name}> closes ${open === undefined ? "nothing" : `<${open}>`}`);
      visit({ depth: names.length + 1, name, text: texts.pop() as string | null });
      at = gt + 1;
    } else {
      const tag = startTag(xml, lt);
      if (names.length === 0) {
        if (rootSeen) throw new Error("XML: more than one root element");
        rootSeen = true;
      }
      // The parent holds an element: it is no leaf, its text is not gathered.
      if (names.length > 0) texts[texts.length - 1] = null;
      if (tag.selfClosing) visit({ depth: names.length + 1, name: tag.name, text: "" });
      else {
        names.push(tag.name);
        texts.push("");
      }
      at = tag.end;
    }
  }
  if (names.length > 0) throw new Error(`XML: <${names.at(-1)}> is not closed`);
  if (!rootSeen) throw new Error("XML: no root element");
}

/** A comment or CDATA section at `lt` (any other "<!" is a declaration S3 never sends); where it ends. */
function markupDeclaration(xml: string, lt: number, names: readonly string[], texts: (string | null)[]): number {
  if (xml.startsWith("<!--", lt)) return endOf(xml, "-->", lt, "comment");
  if (!xml.startsWith("<![CDATA[", lt)) throw new Error("XML: a document type declaration is not expected here");
  const end = endOf(xml, "]]>", lt, "CDATA section");
  if (names.length === 0) throw new Error("XML: character data outside the root element");
  addText(names, texts, normaliseLineEnds(xml.slice(lt + 9, end - 3)));
  return end;
}

function addText(names: readonly string[], texts: (string | null)[], text: string): void {
  if (names.length === 0) {
    if (text.trim() !== "") throw new Error("XML: character data outside the root element");
    return;
  }
  const last = texts.length - 1;
  if (texts[last] !== null) texts[last] += text;
}

function endOf(xml: string, terminator: string, from: number, what: string): number {
  const end = xml.indexOf(terminator, from);
  if (end === -1) throw new Error(`XML: a ${what} is not closed`);
  return end + terminator.length;
}

/** The start tag at `lt`: its name, whether it closes itself, and where it ends (attribute values may hold ">"). */
function startTag(xml: string, lt: number): { name: string; selfClosing: boolean; end: number } {
  let at = lt + 1;
  while (at < xml.length && !isNameEnd(xml.charCodeAt(at))) at++;
  const name = xml.slice(lt + 1, at);
  if (name === "") throw new Error("XML: a tag has no name");
  let quote = 0;
  for (; at < xml.length; at++) {
    const code = xml.charCodeAt(at);
    if (quote !== 0) {
      if (code === quote) quote = 0;
    } else if (code === 0x22 || code === 0x27) quote = code;
    else if (code === 0x3c) throw new Error(`XML: "<" inside the start tag of <${name}>`);
    else if (code === 0x3e) return { name, selfClosing: xml.charCodeAt(at - 1) === 0x2f, end: at + 1 };
  }
  throw new Error(`XML: the start tag of <${name}> is not closed`);
}

/** Whitespace, "/" or ">": where a tag's name ends. */
function isNameEnd(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d || code === 0x2f || code === 0x3e;
}

function normaliseLineEnds(text: string): string {
  return text.includes("\r") ? text.replace(/\r\n?/g, "\n") : text;
}

/** Character data: line ends normalised, then the predefined entities and character references decoded. */
function decodeText(raw: string): string {
  const text = normaliseLineEnds(raw);
  if (!text.includes("&")) return text;
  return text.replace(/&([^;&<]*);|&/g, (match, body: string | undefined) => {
    if (body === undefined) throw new Error("XML: a bare '&' in character data");
    const named = PREDEFINED[body];
    if (named !== undefined) return named;
    const code = body.startsWith("#x") ? Number.parseInt(body.slice(2), 16) : body.startsWith("#") ? Number.parseInt(body.slice(1), 10) : Number.NaN;
    const digits = body.startsWith("#x") ? /^#x[0-9a-fA-F]+$/ : /^#[0-9]+$/;
    if (!digits.test(body) || !isXmlChar(code)) throw new Error(`XML: unknown entity or character reference ${match}`);
    return String.fromCodePoint(code);
  });
}

/** XML 1.0's Char production. */
function isXmlChar(code: number): boolean {
  return code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff);
}
