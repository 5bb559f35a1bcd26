/** The LanceDB operations the benchmarks compare against, each on a fresh connection. */
import * as lancedb from "@lancedb/lancedb";
import type { S3Env } from "../harness/s3-env.ts";

export interface LanceDbVersionsResult {
  versions: number;
  newestVersion: number;
  newestFragments: number;
}

/** Opens a fresh connection: no manifest cached from a previous run. */
async function connect(databaseUri: string, s3: S3Env | null): Promise<lancedb.Connection> {
  return lancedb.connect(databaseUri, s3 ? { storageOptions: s3.lancedbStorageOptions() } : {});
}

/** `openTable` + `listVersions()`: what a user runs to see a table's history. */
export async function lancedbListVersions(databaseUri: string, tableName: string, s3: S3Env | null): Promise<LanceDbVersionsResult> {
  const db = await connect(databaseUri, s3);
  try {
    const table = await db.openTable(tableName);
    try {
      const versions = await table.listVersions();
      const newest = versions.at(-1);
      return {
        versions: versions.length,
        newestVersion: newest?.version ?? 0,
        newestFragments: Number(newest?.metadata.total_fragments ?? 0),
      };
    } finally {
      table.close();
    }
  } finally {
    db.close();
  }
}

/** `openTable` + `version()`: loading the current state of a table. */
export async function lancedbOpenTable(databaseUri: string, tableName: string, s3: S3Env | null): Promise<number> {
  const db = await connect(databaseUri, s3);
  try {
    const table = await db.openTable(tableName);
    try {
      return await table.version();
    } finally {
      table.close();
    }
  } finally {
    db.close();
  }
}
