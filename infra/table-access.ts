/**
 * Least-privilege S3 statements for the functions, one builder per kind of access. Reads and
 * listings cover the configured tables and prefixes; writes (only under `<root>/_lakewarden/`)
 * and deletes (only under `<root>/`) name each writable table root, one resource per root,
 * because an S3 ARN wildcard crosses "/" and so cannot stop at a table's folder. Only
 * `prefixWideAccess` widens writes and deletes to whole prefixes. No statement ever names
 * `s3:*` or a whole-bucket object ARN.
 */
import { ArnFormat, Stack } from "aws-cdk-lib";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { IConstruct } from "constructs";
import type { IBucket } from "aws-cdk-lib/aws-s3";
import { LAKEWARDEN_FOLDER, type LakewardenSettings } from "./settings.ts";
import { isSecretArn } from "./catalog-settings.ts";

type Scopes = Pick<LakewardenSettings, "tables" | "tablePrefixes">;
type WriteScopes = Pick<LakewardenSettings, "tables" | "tablePrefixes" | "tableRoots" | "prefixWideAccess">;

/** Key patterns matching every object of every configured table (reads and listings). */
export function tableObjectPatterns(scopes: Scopes): string[] {
  return [...scopes.tables.map((table) => `${table}/*`), ...scopes.tablePrefixes.map((prefix) => `${prefix}*`)];
}

/** The table roots lakewarden may change: the named tables and the roots listed under prefixes. */
export function writableTableRoots(scopes: WriteScopes): string[] {
  return [...scopes.tables, ...scopes.tableRoots];
}

/** Key patterns matching every object lakewarden may delete. */
export function deletableObjectPatterns(scopes: WriteScopes): string[] {
  return [...writableTableRoots(scopes).map((root) => `${root}/*`), ...(scopes.prefixWideAccess ? scopes.tablePrefixes.map((prefix) => `${prefix}*`) : [])];
}

/** Key patterns matching lakewarden's own objects inside every writable table. */
export function lakewardenObjectPatterns(scopes: WriteScopes): string[] {
  return [
    ...writableTableRoots(scopes).map((root) => `${root}/${LAKEWARDEN_FOLDER}*`),
    // Only with prefixWideAccess: the "*" crosses "/", so this matches a `_lakewarden/` folder at any depth.
    ...(scopes.prefixWideAccess ? scopes.tablePrefixes.map((prefix) => `${prefix}*/${LAKEWARDEN_FOLDER}*`) : []),
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
export function writeLakewardenStatement(bucket: IBucket, scopes: WriteScopes): PolicyStatement {
  return new PolicyStatement({
    sid: "WriteLakewardenObjects",
    actions: ["s3:PutObject"],
    resources: lakewardenObjectPatterns(scopes).map((pattern) => bucket.arnForObjects(pattern)),
  });
}

/** DeleteObject (which also authorizes each key of DeleteObjects) under the writable table roots only. */
export function deleteTableObjectsStatement(bucket: IBucket, scopes: WriteScopes): PolicyStatement {
  return new PolicyStatement({
    sid: "DeleteTableObjects",
    actions: ["s3:DeleteObject"],
    resources: deletableObjectPatterns(scopes).map((pattern) => bucket.arnForObjects(pattern)),
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

/**
 * glue:GetTable on the Glue tables the settings name and nothing else, with `commit` also
 * glue:UpdateTable (cleanup's expiry commit moves the entry's pointer), or null when none is
 * named. Glue authorizes both against the catalog, the database and the table ARNs together, so
 * each entry needs all three (its own account's catalog unless `catalogId` names another).
 */
export function glueTablesStatement(scope: IConstruct, glueTables: LakewardenSettings["glueTables"], access: { commit: boolean }): PolicyStatement | null {
  const names = Object.values(glueTables);
  if (names.length === 0) return null;
  const stack = Stack.of(scope);
  const arn = (resource: string, resourceName: string | undefined, account: string | undefined) =>
    stack.formatArn({ service: "glue", resource, ...(resourceName !== undefined ? { resourceName } : {}), ...(account ? { account } : {}) });
  const resources = new Set<string>();
  for (const name of names) {
    resources.add(arn("catalog", undefined, name.catalogId));
    resources.add(arn("database", name.database, name.catalogId));
    resources.add(arn("table", `${name.database}/${name.table}`, name.catalogId));
  }
  return access.commit
    ? new PolicyStatement({ sid: "CommitGlueTables", actions: ["glue:GetTable", "glue:UpdateTable"], resources: [...resources] })
    : new PolicyStatement({ sid: "ReadGlueTablePointers", actions: ["glue:GetTable"], resources: [...resources] });
}

/**
 * secretsmanager:GetSecretValue on exactly the secrets the REST catalog tables name (their
 * credentials, read at run time), or null when none is named. A secret named by ARN is granted
 * as given; one named by its name is granted as `name-??????`, the six characters Secrets Manager
 * appends to every secret's ARN (never `name*`, which would also match `name-other`).
 */
export function readCatalogSecretsStatement(scope: IConstruct, restCatalogTables: LakewardenSettings["restCatalogTables"]): PolicyStatement | null {
  const secrets = [...new Set(Object.values(restCatalogTables).flatMap((entry) => (entry.credentialsSecret !== undefined ? [entry.credentialsSecret] : [])))];
  if (secrets.length === 0) return null;
  const stack = Stack.of(scope);
  const resources = secrets.map((secret) =>
    isSecretArn(secret) ? secret : stack.formatArn({ service: "secretsmanager", resource: "secret", resourceName: `${secret}-??????`, arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
  );
  return new PolicyStatement({ sid: "ReadCatalogCredentials", actions: ["secretsmanager:GetSecretValue"], resources });
}
