/**
 * Catalog commits on a copy of the athena-example fixture (whose metadata files are catalog-named
 * NNNNN-uuid, as Glue, Hive and REST catalog writers name them): the fixture's current file and
 * two commits on top of it, named as such a writer names them before it swaps the catalog's
 * pointer. Which of them is the table's current one is then the catalog's to say.
 */
import { randomUUID } from "node:crypto";
import { copyFile, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { appendSnapshot } from "./iceberg-fixtures.ts";

const ATHENA_LOCATION = "s3://hyperparam-iceberg/athena/example";
const LIVE_DATA = "data/sNoYhg/20250401_023623_00108_u4nkm-ee75816e-a3dd-4356-97b3-1c6d0128a41f.parquet";

/** Metadata file names (under metadata/): the fixture's current one and the two appended (fresh uuids). */
export interface AthenaCatalogFiles {
  ACCEPTED: string;
  SECOND: string;
  THIRD: string;
}

export function athenaCatalogFiles(): AthenaCatalogFiles {
  return {
    ACCEPTED: "00001-aaf0d033-d06b-43c7-be60-67f83abd4aca.metadata.json",
    SECOND: `00002-${randomUUID()}.metadata.json`,
    THIRD: `00003-${randomUUID()}.metadata.json`,
  };
}

/**
 * Appends two snapshots to the athena-example copy with appendSnapshot (which works on
 * v<N>.metadata.json and a version hint), then names the new files as a catalog writer does
 * (NNNNN-uuid, no version hint) and points each metadata log at those names.
 */
export async function appendCatalogCommits(dir: string, { ACCEPTED, SECOND, THIRD }: AthenaCatalogFiles): Promise<void> {
  await copyFile(join(dir, "metadata", ACCEPTED), join(dir, "metadata/v1.metadata.json"));
  await writeFile(join(dir, "metadata/version-hint.text"), "1");
  const size = (await stat(join(dir, LIVE_DATA))).size;
  for (const n of [1, 2]) {
    const file = `data/sNoYhg/appended-${n}.parquet`;
    await copyFile(join(dir, LIVE_DATA), join(dir, file));
    await appendSnapshot(dir, { files: [{ path: `${ATHENA_LOCATION}/${file}`, recordCount: 1, sizeInBytes: size }] });
  }
  const names: Record<string, string> = { v1: ACCEPTED, v2: SECOND, v3: THIRD };
  for (const v of ["v2", "v3"]) {
    let text = await readFile(join(dir, `metadata/${v}.metadata.json`), "utf8");
    for (const [from, to] of Object.entries(names)) text = text.replaceAll(`metadata/${from}.metadata.json`, `metadata/${to}`);
    await writeFile(join(dir, "metadata", names[v]!), text);
  }
  for (const key of ["metadata/v1.metadata.json", "metadata/v2.metadata.json", "metadata/v3.metadata.json", "metadata/version-hint.text"]) await rm(join(dir, key));
}
