/**
 * The one part of apache-arrow proving a deletion file uses. Loaded through this module, not the
 * package itself: a bundler keeps every export of a dynamically imported module.
 */
export { RecordBatchFileReader } from "apache-arrow";
