/**
 * Least-privilege S3 statements for the functions, one builder per kind of access. Every
 * resource is scoped to the configured tables or prefixes: reads on the table prefixes, writes
 * only under each table's `_lakewarden/`, deletes only under the table prefixes. No statement
 * ever names `s3:*` or a whole-bucket object ARN.
 */
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { IBucket } from "aws-cdk-lib/aws-s3";
import { LAKEWARDEN_FOLDER, type LakewardenSettings } from "./settings.ts";

type Scopes = Pick<LakewardenSettings, "tables" | "tablePrefixes">;

/** Key patterns matching every object of every configured table. */
export function tableObjectPatterns(scopes: Scopes): string[] {
  return [...scopes.tables.map((table) => `${table}/*`), ...scopes.tablePrefixes.map((prefix) => `${prefix}*`)];
}

/** Key patterns matching lakewarden's own objects inside every configured table. */
export function lakewardenObjectPatterns(scopes: Scopes): string[] {
  return [
    ...scopes.tables.map((table) => `${table}/${LAKEWARDEN_FOLDER}*`),
    // S3 ARN wildcards cross "/", so this matches `_lakewarden/` of a table at any depth.
    ...scopes.tablePrefixes.map((prefix) => `${prefix}*/${LAKEWARDEN_FOLDER}*`),
  ];
}

/** GetObject on table objects and ListBucket limited to the table prefixes. */
export function readTablesStatements(bucket: IBucket, scopes: Scopes): PolicyStatement[] {
  const patterns = tableObjectPatterns(scopes);
  return [
    new PolicyStatement({
      sid: "ReadTableObjects",
      actions: ["s3:GetObject"],
      resources: patterns.map((pattern) => bucket.arnForObjects(pattern)),
    }),
    new PolicyStatement({
      sid: "ListTablePrefixes",
      actions: ["s3:ListBucket"],
      resources: [bucket.bucketArn],
      conditions: { StringLike: { "s3:prefix": patterns } },
    }),
  ];
}

/** PutObject only under `_lakewarden/` of the tables (head, lease, checkpoints, receipts). */
export function writeLakewardenStatement(bucket: IBucket, scopes: Scopes): PolicyStatement {
  return new PolicyStatement({
    sid: "WriteLakewardenObjects",
    actions: ["s3:PutObject"],
    resources: lakewardenObjectPatterns(scopes).map((pattern) => bucket.arnForObjects(pattern)),
  });
}

/** DeleteObject (which also authorizes each key of DeleteObjects) under the table prefixes only. */
export function deleteTableObjectsStatement(bucket: IBucket, scopes: Scopes): PolicyStatement {
  return new PolicyStatement({
    sid: "DeleteTableObjects",
    actions: ["s3:DeleteObject"],
    resources: tableObjectPatterns(scopes).map((pattern) => bucket.arnForObjects(pattern)),
  });
}

/** ListBucket for discovering tables under the prefixes (and listing named tables' folders). */
export function discoverTablesStatement(bucket: IBucket, scopes: Scopes): PolicyStatement {
  return new PolicyStatement({
    sid: "DiscoverTables",
    actions: ["s3:ListBucket"],
    resources: [bucket.bucketArn],
    conditions: { StringLike: { "s3:prefix": tableObjectPatterns(scopes) } },
  });
}
