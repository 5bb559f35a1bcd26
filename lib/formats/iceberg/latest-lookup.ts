/**
 * Finding an Iceberg table's latest version file with a head's (or a warm state's) version file
 * in hand, in one round trip when nothing changed. latestVersionFile lists `metadata/` and reads
 * the version hint, then GETs the newest metadata file to learn its current snapshot: two round
 * trips. The listing alone names the newest file with its size and ETag; a version file recorded
 * as that same file's current snapshot (`currentInFile`, with the snapshot's id) is then still the
 * latest, since a metadata file never changes once written and the ETag would show it replaced.
 * Anything else (another newest file, a changed one, a hint holding a file stem rather than a
 * number, a version file not known to be its file's current snapshot) reads the file, reusing the
 * listing and hint already made.
 *
 * A table whose current metadata file a catalog or the user names (a pointer) never looks at the
 * listing: the named file's HEAD decides, the same way, so only the catalog's word is trusted.
 * Without a pointer, a listing whose newest file is catalog-named is refused
 * (CatalogPointerRequiredError): the newest may be a commit the catalog never accepted.
 */
import type { ObjectInfo, ObjectStore } from "../../store/object-store.ts";
import { NotATableError } from "../errors.ts";
import { StartedRequests } from "../started-requests.ts";
import type { LatestVersionLookup, VersionFile } from "../table-format.ts";
import { lookAtMetadata, openIcebergTable, unnamedCatalogPointerRefusal, type OpenOptions } from "./table-state.ts";
import { rememberTable } from "./table-cache.ts";
import { currentVersionFile } from "./version-files.ts";

/** The lookup of a catalog-less table: the LIST and the hint go out at once. */
export function startListedLookup(store: ObjectStore): LatestVersionLookup {
  const requests = new StartedRequests();
  const look = requests.add(lookAtMetadata(store));
  let latest: Promise<VersionFile | null> | undefined;
  const full = () => (latest ??= requests.add(look.then((seen) => currentOrNull(store, { look: seen }))));
  return {
    latest: full,
    latestFrom: async (known) => {
      const seen = await look;
      // A catalog-named newest file is never vouched for by the listing: refused before `known` is compared.
      const refusal = unnamedCatalogPointerRefusal(store, seen);
      if (refusal) throw refusal;
      const { latest: newest, hint } = seen;
      // A hint holding a file stem may name another file than the newest number: read it the long way.
      if (newest === null || (hint !== null && hint.sequence === null)) return full();
      return stillCurrent(known, newest) ?? full();
    },
    settled: () => requests.settled(),
  };
}

/**
 * The lookup of a table at a named metadata file: one HEAD of that file, sent at once. The pointer
 * is known before any head is read, so a head written for it is confirmed in the round trip of
 * the head's own GET; a load that finds no usable head wastes that one HEAD, sent in parallel.
 */
export function startPointerLookup(store: ObjectStore, pointer: string): LatestVersionLookup {
  const requests = new StartedRequests();
  // A failed HEAD (the file gone) is answered by the full read, which names the problem as latestVersionFile does.
  const pointed = requests.add(store.head(pointer)).catch(() => null);
  let latest: Promise<VersionFile | null> | undefined;
  const full = () => (latest ??= requests.add(currentOrNull(store, { metadataKey: pointer })));
  return {
    latest: full,
    latestFrom: async (known) => {
      if (known.key !== pointer || known.currentInFile !== true) return full();
      const info = await pointed;
      return (info && stillCurrent(known, info)) ?? full();
    },
    settled: () => requests.settled(),
  };
}

/** `known` as latestVersionFile would give it, when `file` is its metadata file unchanged and `known` was that file's current snapshot; else null. */
function stillCurrent(known: VersionFile, file: ObjectInfo): VersionFile | null {
  if (known.currentInFile !== true || known.id === undefined) return null;
  if (file.key !== known.key || file.size !== known.size || file.etag !== known.etag) return null;
  return { version: known.version, id: known.id, key: file.key, size: file.size, etag: file.etag, lastModified: file.lastModified, currentInFile: true };
}

/** latestVersionFile's answer: null when the store holds no Iceberg table. */
async function currentOrNull(store: ObjectStore, options: OpenOptions): Promise<VersionFile | null> {
  try {
    return currentVersionFile(rememberTable(await openIcebergTable(store, options)));
  } catch (error) {
    if (error instanceof NotATableError && error.uri === store.uri) return null;
    throw error;
  }
}
