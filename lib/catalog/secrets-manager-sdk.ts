/**
 * The parts of the Secrets Manager SDK lakewarden uses, loaded through this module (as glue-sdk.ts
 * does for Glue): a bundler keeps every export of a dynamically imported module.
 */
export { GetSecretValueCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
