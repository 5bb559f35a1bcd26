/** The parts of the S3 Tables SDK lakewarden uses, loaded through this module on first use (as glue-sdk.ts). */
export { GetTableMaintenanceConfigurationCommand, S3TablesClient } from "@aws-sdk/client-s3tables";
