/**
 * Reads one Lance version from the store: the manifest file (index section and inline
 * transaction included) and, when the transaction is not inline, its transaction file.
 */
import type { ObjectStore } from "../../store/object-store.ts";
import { NotFoundError } from "../../store/errors.ts";
import type { LanceManifest, LanceTransaction } from "./manifest-model.ts";
import { loadManifestReader } from "./load-manifest-reader.ts";
import type { FragmentCache, LanceCleanupView } from "./manifest-reader.ts";
import { TRANSACTIONS_PREFIX, tableKey } from "./table-paths.ts";

export interface LanceVersion {
  manifest: LanceManifest;
  /** null when the version has neither an inline transaction nor a readable transaction file. */
  transaction: LanceTransaction | null;
  /** The manifest file's bytes as stored. */
  bytes: Uint8Array;
  etag: string;
  lastModified: Date;
}

/**
 * A transaction file that is gone is not an error: Lance itself never reads transactions
 * to list versions, and the rest of the version is intact. Anything else propagates.
 */
async function readTransactionFile(store: ObjectStore, file: string, manifestUri: string): Promise<LanceTransaction | null> {
  const key = tableKey(TRANSACTIONS_PREFIX, file, "transaction file", manifestUri);
  try {
    const [{ body }, { decodeLanceTransaction }] = await Promise.all([store.get(key), loadManifestReader()]);
    return decodeLanceTransaction(body, store.uriOf(key));
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}

/** `knownSize` (from a listing) lets a small manifest be read with one plain GET. */
export async function readLanceVersion(store: ObjectStore, key: string, knownSize?: number): Promise<LanceVersion> {
  const uri = store.uriOf(key);
  const { readManifestFile, decodeLanceManifestFile } = await loadManifestReader();
  const { bytes, etag, lastModified } = await readManifestFile(store, key, knownSize);
  const { manifest, inlineTransaction } = decodeLanceManifestFile(bytes, uri);
  let transaction = inlineTransaction;
  if (!transaction && manifest.transactionFile !== null) transaction = await readTransactionFile(store, manifest.transactionFile, uri);
  return { manifest, transaction, bytes, etag, lastModified };
}

export interface LanceCleanupVersion {
  /** Only what cleanup and the version history need (manifest-reader.ts). */
  view: LanceCleanupView;
  transaction: LanceTransaction | null;
  bytes: Uint8Array;
}

/** Like readLanceVersion, decoding only what cleanup needs; `cache` shares fragments between versions. */
export async function readLanceCleanupVersion(
  store: ObjectStore,
  key: string,
  knownSize?: number,
  cache?: FragmentCache,
  options: { whole?: boolean } = {},
): Promise<LanceCleanupVersion> {
  const uri = store.uriOf(key);
  const { readManifestFile, decodeLanceCleanupView } = await loadManifestReader();
  const { bytes } = await readManifestFile(store, key, knownSize, options);
  const view = decodeLanceCleanupView(bytes, uri, store.uri, cache);
  let transaction = view.inlineTransaction;
  if (!transaction && view.transactionFile !== null) transaction = await readTransactionFile(store, view.transactionFile, uri);
  return { view, transaction, bytes };
}
