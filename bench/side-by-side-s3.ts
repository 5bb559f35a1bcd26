/**
 * The emulated S3 of the side-by-side benchmark: bench/harness/s3-server.ts (fauxqs behind the
 * per-request delay) with one fix-up first. fauxqs 2.4.1 sorts a listing with `localeCompare`,
 * which puts `_last_checkpoint` before `00000000000000000004.checkpoint.parquet`, while S3 lists
 * keys in UTF-8 binary order and fauxqs itself filters `start-after` in binary order: delta-rs
 * (delta-kernel) then finds a `_last_checkpoint` hint without its checkpoint and refuses the
 * table, and a paged listing can skip keys. The store's listObjects is replaced here by the same
 * code with S3's order. Run as s3-server.ts is (`startSideBySideS3` does).
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { BENCH_BUCKET, S3Env } from "./harness/s3-env.ts";

interface StoredObject {
  key: string;
}
interface ListOptions {
  prefix?: string;
  delimiter?: string;
  maxKeys?: number;
  startAfter?: string;
  marker?: string;
}
type Store = { buckets: Map<string, Map<string, StoredObject>> };

const binary = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** fauxqs 2.4.1's S3Store.listObjects, in S3's key order. */
function listInS3Order(this: Store, original: (bucket: string, options?: ListOptions) => unknown, bucket: string, options?: ListOptions) {
  const objectsMap = this.buckets.get(bucket);
  if (!objectsMap) return original.call(this, bucket, options);
  const prefix = options?.prefix ?? "";
  const delimiter = options?.delimiter;
  const maxKeys = options?.maxKeys ?? 1000;
  const startAfter = options?.startAfter ?? options?.marker ?? "";
  const all = [...objectsMap.values()].filter((o) => o.key.startsWith(prefix) && !(startAfter && o.key <= startAfter)).sort((a, b) => binary(a.key, b.key));
  const objects: StoredObject[] = [];
  const prefixes = new Set<string>();
  let isTruncated = false;
  for (const object of all) {
    const rest = object.key.slice(prefix.length);
    const at = delimiter ? rest.indexOf(delimiter) : -1;
    const common = at >= 0 ? prefix + rest.slice(0, at + delimiter!.length) : null;
    if (common !== null && ((startAfter && common <= startAfter) || prefixes.has(common))) continue;
    if (objects.length + prefixes.size >= maxKeys) {
      isTruncated = true;
      break;
    }
    if (common !== null) prefixes.add(common);
    else objects.push(object);
  }
  return { objects, commonPrefixes: [...prefixes].sort(binary), isTruncated };
}

/** Starts the emulator through this file; the same S3Env the other benchmarks use. */
export async function startSideBySideS3(delayMs: number): Promise<S3Env> {
  const args = ["--disable-warning=ExperimentalWarning", fileURLToPath(import.meta.url), "memory", String(delayMs), BENCH_BUCKET];
  const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout! });
  const ready = await new Promise<{ endpoint: string; direct: string }>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`side-by-side S3 server exited early with code ${code}`)));
    lines.once("line", (line) => resolve(JSON.parse(line) as { endpoint: string; direct: string }));
  });
  // S3Env's constructor is private to S3Env.start, which always runs s3-server.ts itself.
  const construct = S3Env as unknown as new (child: unknown, storageDir: null, endpoint: string, direct: string, delayMs: number) => S3Env;
  return new construct(child, null, ready.endpoint, ready.direct, delayMs);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const storeUrl = new URL("./s3/s3Store.js", import.meta.resolve("fauxqs"));
  const { S3Store } = (await import(storeUrl.href)) as { S3Store: { prototype: Record<string, unknown> } };
  const original = S3Store.prototype.listObjects as (bucket: string, options?: ListOptions) => unknown;
  S3Store.prototype.listObjects = function (this: Store, bucket: string, options?: ListOptions) {
    return listInS3Order.call(this, original, bucket, options);
  };
  await import("./harness/s3-server.ts");
}
