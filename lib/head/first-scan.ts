/**
 * A cold scan in two dependent round trips to the first data byte on every format: the head's GET,
 * then the check that the head is current beside the first data reads.
 *
 * A cold load waits for the check before it plans: Delta can list `_delta_log/` from the head's
 * version only once the head has named it, so its data came a round trip later (three). Here the
 * head's state is planned and its files read while the check is out, and no row, nor any failure
 * of those reads, reaches the caller before the check shows the head describes the latest version
 * file. A head the check does not confirm has its reads dropped, and the scan is planned again
 * from the latest version, read as a cold load reads it (the stale head's footers of files still
 * live reused). A missing, unreadable or foreign head is not guessed at: the cold load decides.
 */
import { registeredFormat } from "../formats/index.ts";
import type { LatestVersionLookup, TableFormat, VersionFile } from "../formats/table-format.ts";
import type { ScanOptions, ValueBatch } from "../scan/rows.ts";
import { StoreError } from "../store/errors.ts";
import type { ObjectStore } from "../store/object-store.ts";
import { headDescribesFile } from "./content.ts";
import { loadStoredHead } from "./head-reader.ts";
import type { LoadedHead } from "./head-reader.ts";
import { headState, loadTableState } from "./loader.ts";
import type { TableState } from "./loader.ts";
import { headCodecs } from "./registry.ts";
import type { HeadCodecRegistry } from "./registry.ts";

export interface FirstScanOptions {
  /** The table's format, when the caller knows it (else the head names it). */
  format?: TableFormat;
  codecs?: HeadCodecRegistry;
  checkedAt: number;
  /** Told the state the rows come from once it is confirmed or loaded, before the first row. */
  onState: (state: TableState) => void;
}

/** The head as read, and the check of it that is still out when the head names a version file. */
interface ColdHead {
  stored: LoadedHead;
  format: TableFormat | undefined;
  /**
   * The latest version file, as the format's lookup finds it (from the head's own when the head
   * named one), once every request the lookup started has ended; null when no lookup was started.
   */
  latest: Promise<VersionFile | null> | null;
}

async function readColdHead(store: ObjectStore, options: FirstScanOptions): Promise<ColdHead> {
  let format = options.format;
  // A lookup that needs no version to start (Iceberg lists metadata/) goes out beside the head's GET.
  let lookup: LatestVersionLookup | undefined = format?.startLatestLookup(store);
  let latest: Promise<VersionFile | null> | null = null;
  // Asked with the head's identity before the rest of the head is read: the check starts, and the
  // head is taken as if current; the caller holds every row until the check answers.
  const startCheck = async (identity: { format: string; versionFile: VersionFile }): Promise<boolean> => {
    format ??= registeredFormat(identity.format);
    if (!format || format.name !== identity.format) return false;
    const started = (lookup ??= format.startLatestLookup(store, identity.versionFile));
    latest = started.latestFrom(identity.versionFile).finally(() => started.settled());
    latest.catch(() => undefined);
    return true;
  };
  let stored: LoadedHead;
  try {
    stored = await loadStoredHead(store, options.codecs ?? headCodecs, startCheck);
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    stored = { state: "failed", problem: error.message };
  }
  // No version file to check from (no head, or one that is not this format's): the lookup already
  // out answers the cold load's question, as loadTableState would ask it.
  if (!latest && lookup) {
    const started = lookup;
    latest = started.latest().finally(() => started.settled());
    latest.catch(() => undefined);
  }
  return { stored, format, latest };
}

/**
 * `started`'s batches once `confirmed` is true; when it is false, `started` is dropped (closed
 * without a batch of it given out, its failure swallowed) and `replan`'s batches are given instead.
 */
export async function* afterConfirmation<T>(started: AsyncGenerator<T>, confirmed: Promise<boolean>, replan: () => AsyncGenerator<T>): AsyncGenerator<T> {
  // The first batch is asked for now: the plan is made and its reads start beside the check.
  const first = started.next();
  first.catch(() => undefined);
  let current: boolean;
  try {
    current = await confirmed;
  } catch (error) {
    started.return(undefined).catch(() => undefined);
    throw error;
  }
  if (!current) {
    // Not awaited now: a read in flight finishes (or fails) on its own, while the new plan reads.
    const dropped = started.return(undefined).catch(() => undefined);
    try {
      yield* replan();
    } finally {
      await dropped;
    }
    return;
  }
  const head = await first;
  if (head.done) return;
  yield head.value;
  yield* started;
}

/** The rows matching `scan` in the latest state of a table nothing was loaded of yet (see the module comment). */
export async function* scanFromCold(store: ObjectStore, options: FirstScanOptions, scan: ScanOptions = {}): AsyncGenerator<ValueBatch> {
  const { scanValues } = await import("../scan/rows.ts");
  const { stored, format, latest } = await readColdHead(store, options);
  const load = async (found: VersionFile | null): Promise<TableState> => {
    const state = await loadTableState(store, {
      ...(format ? { format } : {}),
      ...(options.codecs ? { codecs: options.codecs } : {}),
      checkedAt: options.checkedAt,
      head: stored,
      ...(found ? { latest: found } : {}),
    });
    options.onState(state);
    return state;
  };
  if (stored.state !== "readable" || !format || !latest) {
    yield* scanValues({ ...(await load(latest ? await latest : null)), store }, scan);
    return;
  }
  const unconfirmed = headState(format, stored, options.checkedAt);
  const found = latest;
  const confirmed = found.then((file) => file !== null && headDescribesFile(stored.content, file, format.name));
  const replan = async function* () {
    yield* scanValues({ ...(await load(await found)), store }, scan);
  };
  yield* afterConfirmation(
    scanValues({ ...unconfirmed, store }, scan),
    confirmed.then((current) => {
      if (current) options.onState(unconfirmed);
      return current;
    }),
    replan,
  );
}
