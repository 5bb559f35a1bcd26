/**
 * S3 Tables runs its own snapshot management on a table (snapshot expiry by its own settings) and
 * its own unreferenced-file removal. While snapshot management is enabled, lakewarden leaves the
 * table alone: two maintainers expiring one table by two policies would each undo the other's
 * retention. The status is the s3tables API's GetTableMaintenanceConfiguration
 * (`configuration.icebergSnapshotManagement.status`), asked right before each run.
 *
 * The SDK loads with the first call (s3tables-sdk.ts); the client follows the environment
 * (AWS_ENDPOINT_URL_S3TABLES, the credential chain) unless given.
 */
import type { S3TablesClient } from "@aws-sdk/client-s3tables";
import type { AwsCredentials } from "./iceberg-rest.ts";

export interface S3TablesTableName {
  /** The table bucket's ARN (the REST catalog's warehouse): `arn:aws:s3tables:<region>:<account>:bucket/<name>`. */
  tableBucketArn: string;
  namespace: string;
  table: string;
}

/** GetTableMaintenanceConfiguration failed: whether S3 Tables maintains the table is unknown, so nothing is done. */
export class S3TablesMaintenanceError extends Error {
  readonly code: string;
  constructor(name: S3TablesTableName, code: string, problem: string, options?: { cause?: unknown }) {
    super(`S3 Tables table ${JSON.stringify(`${name.namespace}.${name.table}`)} in ${name.tableBucketArn}: ${problem}; nothing read, written or deleted`, options);
    this.name = "S3TablesMaintenanceError";
    this.code = code;
  }
}

const TABLE_BUCKET_ARN = /^arn:aws[a-z-]*:s3tables:[a-z0-9-]+:\d{12}:bucket\/[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

/** Whether `text` is an S3 table bucket's ARN (the warehouse S3 Tables' REST endpoint is asked for). */
export function isTableBucketArn(text: string): boolean {
  return TABLE_BUCKET_ARN.test(text);
}

export interface S3TablesOptions {
  region: string;
  client?: S3TablesClient;
  credentials?: () => Promise<AwsCredentials>;
}

/**
 * Null when S3 Tables' own snapshot management is off for the table (lakewarden may expire it),
 * else the one line saying why lakewarden leaves it alone. Throws S3TablesMaintenanceError when
 * the status cannot be read.
 */
export async function s3TablesSnapshotManagement(name: S3TablesTableName, options: S3TablesOptions): Promise<string | null> {
  const sdk = await import("./s3tables-sdk.ts");
  const client =
    options.client ??
    new sdk.S3TablesClient({
      region: options.region,
      requestHandler: { connectionTimeout: 10_000, requestTimeout: 30_000, throwOnRequestTimeout: true },
      ...(options.credentials ? { credentials: options.credentials } : {}),
    });
  let answer;
  try {
    answer = await client.send(new sdk.GetTableMaintenanceConfigurationCommand({ tableBucketARN: name.tableBucketArn, namespace: name.namespace, name: name.table }));
  } catch (error) {
    const code = (error as { name?: string }).name ?? "Error";
    const message = ((error as { message?: string }).message ?? String(error)).split("\n")[0]!;
    const problem =
      code === "AccessDeniedException" || code === "ForbiddenException"
        ? `access denied (${code}: ${message}): the role needs s3tables:GetTableMaintenanceConfiguration on the table`
        : `GetTableMaintenanceConfiguration failed (${code}: ${message})`;
    throw new S3TablesMaintenanceError(name, code, `${problem}: whether S3 Tables maintains it is unknown`, { cause: error });
  }
  const status = answer.configuration?.icebergSnapshotManagement?.status;
  if (status === "disabled") return null;
  // Enabled is S3 Tables' default; an answer without a status is taken as enabled, which leaves the table alone.
  return `S3 Tables' own snapshot management is ${status ?? "not reported as disabled"} for this table (icebergSnapshotManagement): S3 Tables expires its snapshots; lakewarden leaves it alone (disable it with PutTableMaintenanceConfiguration to let lakewarden expire it)`;
}
