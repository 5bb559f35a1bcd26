/**
 * Setup of the emulated S3 without S3 requests: a local folder loaded straight into fauxqs's store
 * (and the reverse), inside the emulator's process (bench/harness/s3-server.ts's control endpoints).
 *
 * Why: a table of 100,000 files is 100,000 PUTs through the SDK (about 2 minutes here) for every
 * copy a benchmark makes, and S3's LastModified cannot be set by a client, so a copy's files are
 * always as new as the copy. Loaded here, each object keeps its file's modification time as its
 * LastModified: a copy on the emulator has the history of the folder it came from (a commit log
 * dated two days back stays two days old), as a local copy made with `cp -a` does.
 */
import { mkdir, readdir, readFile, stat, utimes, writeFile } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { fauxqsS3StoreClass } from "../../test/support/fauxqs-s3-order.ts";

interface StoredObject {
  key: string;
  body: Buffer;
  lastModified: Date;
}
interface FauxqsStore {
  buckets: Map<string, Map<string, StoredObject>>;
  createBucket(name: string, type?: string): void;
  putObject(bucket: string, key: string, body: Buffer): unknown;
}

let store: FauxqsStore | null = null;

/** Remembers the emulator's S3 store when its first bucket is made (fauxqs does not hand it out). */
export async function captureStore(): Promise<void> {
  const S3Store = await fauxqsS3StoreClass<FauxqsStore>();
  const original = S3Store.prototype.createBucket;
  S3Store.prototype.createBucket = function (this: FauxqsStore, name: string, type?: string) {
    store ??= this;
    return original.call(this, name, type);
  };
}

function objectsOf(bucket: string): Map<string, StoredObject> {
  const objects = store?.buckets.get(bucket);
  if (!store || !objects) throw new Error(`s3-seed: no bucket ${bucket} (captureStore() before the emulator starts)`);
  return objects;
}

/** Runs `work` on every item, `limit` at a time. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/** Every file under `dir` becomes `prefix/<its path>`, its modification time the object's LastModified. */
export async function loadFolder(bucket: string, dir: string, prefix: string): Promise<number> {
  const objects = objectsOf(bucket);
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
  await eachLimited(files, 32, async (file) => {
    const key = `${prefix}/${relative(dir, file).split(sep).join("/")}`;
    const [body, info] = await Promise.all([readFile(file), stat(file)]);
    store!.putObject(bucket, key, body);
    objects.get(key)!.lastModified = new Date(info.mtimeMs);
  });
  return files.length;
}

/** Every object under `prefix/` becomes a file under `dir`, its LastModified the file's modification time. */
export async function saveFolder(bucket: string, prefix: string, dir: string): Promise<number> {
  const objects = [...objectsOf(bucket).values()].filter((object) => object.key.startsWith(`${prefix}/`));
  await eachLimited(objects, 32, async (object) => {
    const file = join(dir, ...object.key.slice(prefix.length + 1).split("/"));
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, object.body);
    await utimes(file, object.lastModified, object.lastModified);
  });
  return objects.length;
}
