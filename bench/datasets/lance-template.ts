/**
 * The model every synthetic manifest copies: a real manifest written by LanceDB itself, so
 * generated tables carry exactly what this LanceDB writes (schema fields, data_format,
 * writer_version, feature flags, config, data-file field lists and file versions) and only
 * the number of fragments and versions is ours.
 */
import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { decodeManifestFile } from "../../lib/formats/lance/manifest-file.ts";
import { parseVersionName } from "../../lib/formats/lance/version-names.ts";
import type { PbDataFragment, PbManifest } from "../../lib/formats/lance/proto-messages.ts";

export interface ManifestTemplate {
  /** The decoded real manifest (its newest version). */
  manifest: PbManifest;
  /** One of its fragments: the shape every synthetic fragment copies. */
  fragment: PbDataFragment;
  /** Rows per fragment in the model table. */
  rowsPerFragment: number;
  /** Local path of the model fragment's data file: a real Lance file to stand in for synthetic ones. */
  dataFilePath: string;
}

export const TEMPLATE_ROWS_PER_FRAGMENT = 100;

/** A table shaped like a typical LanceDB table: an id, some text, a small embedding. */
export function templateRows(count: number, offset = 0): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => ({
    id: offset + i,
    text: `row ${offset + i}`,
    vector: Array.from({ length: 16 }, (_, k) => (((offset + i) * 16 + k) % 97) / 97),
  }));
}

/** Builds (once, cached under `dir`) a small LanceDB table and reads its newest manifest. */
export async function loadManifestTemplate(dir: string): Promise<ManifestTemplate> {
  const tableDir = join(dir, "model.lance");
  if (!(await newestManifest(tableDir).catch(() => null))) {
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const db = await lancedb.connect(dir);
    const table = await db.createTable("model", templateRows(TEMPLATE_ROWS_PER_FRAGMENT));
    await table.add(templateRows(TEMPLATE_ROWS_PER_FRAGMENT, TEMPLATE_ROWS_PER_FRAGMENT));
    table.close();
    db.close();
  }
  const path = await newestManifest(tableDir);
  if (!path) throw new Error(`${tableDir}: LanceDB wrote no manifest`);
  const decoded = decodeManifestFile(new Uint8Array(await readFile(path)), path);
  const fragment = decoded.manifest.fragments[0];
  if (!fragment) throw new Error(`${path}: the model manifest has no fragment to copy`);
  const dataFilePath = join(tableDir, "data", fragment.files[0]!.path);
  return { manifest: decoded.manifest, fragment, rowsPerFragment: TEMPLATE_ROWS_PER_FRAGMENT, dataFilePath };
}

async function newestManifest(tableDir: string): Promise<string | null> {
  const names = await readdir(join(tableDir, "_versions"));
  let best: { version: number; name: string } | null = null;
  for (const name of names) {
    const parsed = parseVersionName(name);
    if (parsed && (!best || parsed.version > best.version)) best = { version: parsed.version, name };
  }
  return best ? join(tableDir, "_versions", best.name) : null;
}
