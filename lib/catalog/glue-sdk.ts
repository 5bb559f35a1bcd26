/**
 * The parts of the Glue SDK lakewarden uses. Loaded through this module, not the package
 * itself: a bundler keeps every export of a dynamically imported module, and the package's
 * index exports some three hundred commands.
 */
export { GetTableCommand, GlueClient, UpdateTableCommand } from "@aws-sdk/client-glue";
