/**
 * Builds a head object for one table version. The mandatory sections always go in; data-file
 * footers of the newest fragments (highest fragment id first) follow while the encoded head
 * stays within the inline budget, measured on the codec's uncompressed output so the stored
 * (compressed) head is never larger than the budget allows for.
 */
import type { DataFileFooter, DataFileFooterReader } from "../formats/data-file-footer.ts";
import type { TableSnapshot } from "../formats/table-format.ts";
import type { ObjectStore } from "../store/object-store.ts";
import { encodeHead } from "./container.ts";
import type { HeadModel } from "./model.ts";
import { assembleSectionedHead, encodeModelSection, modelSections } from "./sectioned.ts";
import { contentToModel } from "./content.ts";
import type { HeadContent, RecentVersions } from "./content.ts";
import type { HeadHeader } from "./header.ts";
import { resolveHeadSettings } from "./settings.ts";
import type { HeadSettingOverrides, HeadSettings } from "./settings.ts";

/** Where footers come from: ones already known (say, from the previous head) first, then reads. */
export interface FooterSource {
  store: ObjectStore;
  read: DataFileFooterReader;
  /** Footers known already, by path; data files never change, so these are reused as is. */
  known?: ReadonlyMap<string, DataFileFooter>;
  /** At most this many footer reads per head (default 64): bounds the requests one commit costs. */
  maxReads?: number;
}

export interface BuildHeadInput extends HeadSettingOverrides {
  /** Header version to write: 2 (sectioned, default) or 1 (one compressed body, as written before). */
  headerVersion?: 1 | 2;
  /** Format name recorded in the head ("lance"). */
  formatName: string;
  snapshot: TableSnapshot;
  recentVersions: RecentVersions;
  footers?: FooterSource;
  /** URI of the version file, for messages about bad settings. */
  uri?: string;
  now?: () => number;
}

export interface BuiltHead {
  bytes: Uint8Array;
  header: HeadHeader;
  content: HeadContent;
  settings: HeadSettings;
  /** Uncompressed body bytes of the mandatory sections alone. */
  mandatoryBytes: number;
  /** Uncompressed body bytes the footers added. */
  footerBytes: number;
  footersRead: number;
  /** Why footer reading stopped early (a data file missing or unreadable); the head is complete without it. */
  footerProblem: string | null;
}

const DEFAULT_MAX_FOOTER_READS = 64;
/** Per-footer framing cost beyond its bytes and path (offsets, sizes, validity) in either codec. */
const FOOTER_ROW_OVERHEAD = 64;

export async function buildHead(input: BuildHeadInput): Promise<BuiltHead> {
  const uri = input.uri ?? input.snapshot.versionFile.key;
  const settings = resolveHeadSettings(input.snapshot, uri, input);
  // The newest-first order is built only when there is room for a footer (not at 100K files).
  let candidateCount = 0;
  for (const file of input.snapshot.liveFiles) candidateCount += file.paths.length;
  const candidates = { length: candidateCount, list: () => newestDataFilesFirst(input.snapshot) };
  const base: HeadContent = {
    format: input.formatName,
    tableVersion: input.snapshot.record.version,
    builtAtMillis: (input.now ?? Date.now)(),
    snapshot: input.snapshot,
    recentVersions: input.recentVersions,
    footers: [],
    footersOmitted: candidates.length,
    inlineBudgetBytes: settings.inlineBudgetBytes,
  };
  if (input.headerVersion === 1) return buildVersion1(input, base, candidates, settings);
  // Sectioned: every section is encoded once; fitting footers re-encodes only the properties and footers.
  const sections = new Map(modelSections(contentToModel(base)).map((s) => [s.name, encodeModelSection(settings.codec, s.name, s.model, settings.compression)]));
  const sum = () => [...sections.values()].reduce((total, section) => total + section.rawLength, 0);
  const mandatoryBytes = sum();
  const limit = Math.max(settings.inlineBudgetBytes, mandatoryBytes);
  const selection = await selectFooters(candidates.list, settings.inlineBudgetBytes - mandatoryBytes, input.footers);
  let footers = selection.footers;
  for (;;) {
    const content: HeadContent = { ...base, footers, footersOmitted: candidates.length - footers.length };
    const model = contentToModelWithout(content);
    for (const s of modelSections(model)) sections.set(s.name, encodeModelSection(settings.codec, s.name, s.model, settings.compression));
    const decodedLength = sum();
    if (decodedLength <= limit || footers.length === 0) {
      const assembled = assembleSectionedHead(content.tableVersion, settings.codec.name, settings.compression, [...sections.values()]);
      return {
        ...assembled,
        content,
        settings,
        mandatoryBytes,
        footerBytes: decodedLength - mandatoryBytes,
        footersRead: selection.read,
        footerProblem: selection.problem,
      };
    }
    const spent = decodedLength - mandatoryBytes;
    const estimated = footers.reduce((total, footer) => total + footerCost(footer), 0);
    footers = keepWithin(footers, ((limit - mandatoryBytes) * estimated) / spent);
  }
}

/** The properties and footers of `content` only (the sections that change while footers are fitted). */
function contentToModelWithout(content: HeadContent): HeadModel {
  const model = contentToModel({
    ...content,
    snapshot: { ...EMPTY_SNAPSHOT, versionFile: content.snapshot.versionFile, record: content.snapshot.record },
    recentVersions: { after: content.recentVersions.after, records: [] },
  });
  return { properties: model.properties, tables: model.tables.filter((table) => table.name === "footers") };
}

const EMPTY_SNAPSHOT: Omit<TableSnapshot, "versionFile" | "record"> = {
  referencedFiles: [],
  unresolvedReferences: [],
  liveFiles: [],
  schema: [],
  config: {},
  raw: new Uint8Array(0),
};

/** The version 1 layout: the whole model through the codec, compressed as one body. */
async function buildVersion1(input: BuildHeadInput, base: HeadContent, candidates: Candidates, settings: HeadSettings): Promise<BuiltHead> {
  const mandatoryBytes = settings.codec.encode(contentToModel(base)).length;
  const limit = Math.max(settings.inlineBudgetBytes, mandatoryBytes);
  const selection = await selectFooters(candidates.list, settings.inlineBudgetBytes - mandatoryBytes, input.footers);
  let footers = selection.footers;
  for (;;) {
    const content: HeadContent = { ...base, footers, footersOmitted: candidates.length - footers.length };
    const encoded = encodeHead(contentToModel(content), {
      tableVersion: content.tableVersion,
      codec: settings.codec,
      compression: settings.compression,
    });
    if (encoded.header.decodedLength <= limit || footers.length === 0) {
      return {
        ...encoded,
        content,
        settings,
        mandatoryBytes,
        footerBytes: encoded.header.decodedLength - mandatoryBytes,
        footersRead: selection.read,
        footerProblem: selection.problem,
      };
    }
    // The codec spends more per footer byte than estimated (json: base64): scale the
    // estimate by what it really spent and drop the newest-last footers that no longer fit.
    const spent = encoded.header.decodedLength - mandatoryBytes;
    const estimated = footers.reduce((sum, footer) => sum + footerCost(footer), 0);
    const room = ((limit - mandatoryBytes) * estimated) / spent;
    footers = keepWithin(footers, room);
  }
}

function footerCost(footer: DataFileFooter): number {
  return footer.bytes.length + Buffer.byteLength(footer.path) + FOOTER_ROW_OVERHEAD;
}

function keepWithin(footers: DataFileFooter[], room: number): DataFileFooter[] {
  const kept: DataFileFooter[] = [];
  let used = 0;
  for (const footer of footers) {
    used += footerCost(footer);
    // Strictly less, so every pass drops at least one footer.
    if (used >= room) break;
    kept.push(footer);
  }
  return kept.length === footers.length ? footers.slice(0, -1) : kept;
}

interface Candidates {
  length: number;
  list: () => string[];
}

function newestDataFilesFirst(snapshot: TableSnapshot): string[] {
  const files = snapshot.liveFiles;
  // Formats usually list fragments by ascending id: then newest first is the reverse, no sort.
  let ascending = true;
  for (let i = 1; i < files.length && ascending; i++) ascending = files[i - 1]!.fragmentId < files[i]!.fragmentId;
  const ordered = ascending ? [...files].reverse() : [...files].sort((a, b) => b.fragmentId - a.fragmentId);
  const paths: string[] = [];
  for (const file of ordered) for (const path of file.paths) paths.push(path);
  return paths;
}

interface FooterSelection {
  footers: DataFileFooter[];
  read: number;
  problem: string | null;
}

/**
 * Footers in newest-first order until the next one would not fit, reads run out, or a read
 * fails: footers are optional, so a missing or odd data file ends the list instead of the head.
 */
async function selectFooters(candidates: () => readonly string[], room: number, source: FooterSource | undefined): Promise<FooterSelection> {
  const selection: FooterSelection = { footers: [], read: 0, problem: null };
  if (!source || room <= 0) return selection;
  const paths = candidates();
  const maxReads = source.maxReads ?? DEFAULT_MAX_FOOTER_READS;
  let used = 0;
  for (const path of paths) {
    let footer = source.known?.get(path);
    if (!footer) {
      if (selection.read >= maxReads) break;
      selection.read++;
      try {
        footer = await source.read(source.store, path);
      } catch (error) {
        selection.problem = error instanceof Error ? error.message : String(error);
        break;
      }
    }
    const cost = footerCost(footer);
    if (used + cost > room) break;
    used += cost;
    selection.footers.push(footer);
  }
  return selection;
}
