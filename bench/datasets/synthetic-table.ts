/**
 * A synthetic Lance table that grows one benchmark step at a time: versions 1..V of an
 * F-fragment table, on local disk (hard links to a generated master copy, so no bytes are
 * duplicated) or on the emulated S3 (uploaded from the master). Growing instead of building
 * one table per V means the S3 side uploads each manifest once.
 */
import { copyFile, link, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { StorageKind } from "../harness/benchmark.ts";
import type { S3Env } from "../harness/s3-env.ts";
import { dataFileName, describeVersion, ensureMasterVersions, GENERATOR_REVISION } from "./manifest-generator.ts";
import type { ManifestTemplate } from "./lance-template.ts";

export interface SyntheticTableOptions {
  template: ManifestTemplate;
  /** Holds the generated master copies, reused across runs. */
  cacheDir: string;
  fragments: number;
  storage: StorageKind;
  s3?: S3Env;
  /** Local: where the table lives. S3: key prefix of the table. */
  name: string;
  /** Largest V this table will grow to (the master is generated that far once). */
  maxVersions: number;
  /**
   * Give the newest N fragments a real data file (a copy of the model's): what the head
   * writer reads footers from. Default 0: no data files.
   */
  realDataFiles?: number;
}

export class SyntheticTable {
  readonly fragments: number;
  readonly storage: StorageKind;
  /** What `lakewarden` and LanceDB are given: a local path or `s3://bucket/prefix/t.lance`. */
  readonly location: string;
  /** The parent of the table, for `lancedb.connect`, and the table name. */
  readonly databaseUri: string;
  readonly tableName = "t";
  manifestBytes = 0;
  private versions = 0;
  private readonly options: SyntheticTableOptions;
  private readonly masterDir: string;
  private readonly localDir: string;

  constructor(options: SyntheticTableOptions) {
    this.options = options;
    this.fragments = options.fragments;
    this.storage = options.storage;
    this.masterDir = join(options.cacheDir, "synthetic", `r${GENERATOR_REVISION}-f${options.fragments}`);
    this.localDir = join(options.cacheDir, "tables", options.name);
    if (options.storage === "s3") {
      if (!options.s3) throw new Error("an S3 synthetic table needs the S3 environment");
      this.databaseUri = options.s3.uri(options.name);
    } else {
      this.databaseUri = this.localDir;
    }
    this.location = `${this.databaseUri}/${this.tableName}.lance`;
  }

  get versionCount(): number {
    return this.versions;
  }

  /** Generates the master (if the cache lacks it) and starts an empty table. */
  async prepare(): Promise<void> {
    const master = await ensureMasterVersions(this.masterDir, this.options.template, this.fragments, this.options.maxVersions);
    this.manifestBytes = master.manifestBytes;
    const dataKeys = this.realDataFileKeys();
    if (this.storage === "local") {
      const tableDir = join(this.localDir, `${this.tableName}.lance`);
      await rm(this.localDir, { recursive: true, force: true });
      await mkdir(join(tableDir, "_versions"), { recursive: true });
      await mkdir(join(tableDir, "_transactions"), { recursive: true });
      await mkdir(join(tableDir, "data"), { recursive: true });
      for (const key of dataKeys) await linkOrCopy(this.options.template.dataFilePath, join(tableDir, key));
    } else {
      const s3 = this.options.s3!;
      await s3.removePrefix(this.options.name);
      const body = await readFile(this.options.template.dataFilePath);
      for (const key of dataKeys) await s3.putObject(`${this.options.name}/${this.tableName}.lance/${key}`, body);
    }
    this.versions = 0;
  }

  private realDataFileKeys(): string[] {
    const count = Math.min(this.options.realDataFiles ?? 0, this.fragments);
    return Array.from({ length: count }, (_, i) => `data/${dataFileName(this.fragments - 1 - i)}`);
  }

  /** Commits versions up to `versions` (each a manifest + transaction file). */
  async growTo(versions: number): Promise<void> {
    if (versions > this.options.maxVersions) throw new RangeError(`table ${this.options.name} was prepared for ${this.options.maxVersions} versions`);
    if (this.storage === "local") {
      const tableDir = join(this.localDir, `${this.tableName}.lance`);
      for (let v = this.versions + 1; v <= versions; v++) {
        const { manifestKey, transactionKey } = describeVersion(this.fragments, v);
        await link(join(this.masterDir, manifestKey), join(tableDir, manifestKey));
        await link(join(this.masterDir, transactionKey), join(tableDir, transactionKey));
      }
      // LanceDB keeps this hint on local disk (its listing there is unordered).
      await writeFile(join(tableDir, "_versions", "latest_version_hint.json"), JSON.stringify({ version: versions }));
    } else {
      const s3 = this.options.s3!;
      const keys: string[] = [];
      for (let v = this.versions + 1; v <= versions; v++) {
        const { manifestKey, transactionKey } = describeVersion(this.fragments, v);
        keys.push(manifestKey, transactionKey);
      }
      await uploadKeys(s3, this.masterDir, `${this.options.name}/${this.tableName}.lance`, keys);
    }
    this.versions = Math.max(this.versions, versions);
  }

  async remove(): Promise<void> {
    if (this.storage === "local") await rm(this.localDir, { recursive: true, force: true });
    else await this.options.s3!.removePrefix(this.options.name);
  }
}

/** Uploads master files (undelayed, 8 in flight: each can be megabytes). */
async function uploadKeys(s3: S3Env, masterDir: string, prefix: string, keys: string[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++]!;
      const body = await readFile(join(masterDir, key));
      await s3.putObject(`${prefix}/${key}`, body);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

/** A hard link, or a copy once the file has as many links as the file system allows (ext4: 65,000). */
async function linkOrCopy(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EMLINK") throw error;
    await copyFile(from, to);
  }
}
