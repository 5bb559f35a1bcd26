/**
 * Tags and branches under `_refs/` (lance.md §1; the JSON keys are camelCase as in
 * rust/lance/src/dataset/refs.rs, not the snake_case of the spec page):
 *   _refs/tags/{tag}.json          {"branch": null|"name", "version": 12, "manifestSize": 3456, ...}
 *   _refs/branches/{branch}.json   {"parentBranch": null|"name", "parentVersion": 3, ...}
 * A `/` in a branch name is stored as `%2F` in the file name.
 */
import { NotFoundError } from "../../store/errors.ts";
import { mapConcurrent } from "../../store/map-concurrent.ts";
import type { ObjectStore } from "../../store/object-store.ts";
import type { Branch, Refs, Tag } from "../table-format.ts";
import { CorruptFileError } from "../errors.ts";

export const TAGS_PREFIX = "_refs/tags/";
export const BRANCHES_PREFIX = "_refs/branches/";
const REF_SUFFIX = ".json";
/** Ref files are tiny; a handful of parallel GETs is plenty. */
const REF_READ_CONCURRENCY = 8;

type JsonObject = Record<string, unknown>;

async function readJsonObject(store: ObjectStore, key: string): Promise<JsonObject> {
  const { body } = await store.get(key);
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(body));
  } catch (error) {
    throw new CorruptFileError(store.uriOf(key), `ref file is not valid JSON: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new CorruptFileError(store.uriOf(key), "ref file is not a JSON object");
  }
  return parsed as JsonObject;
}

function versionField(json: JsonObject, field: string, uri: string): number {
  const value = json[field];
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new CorruptFileError(uri, `"${field}" must be a non-negative integer, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Absent and null both mean main. */
function branchField(json: JsonObject, field: string, uri: string): string | null {
  const value = json[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") {
    throw new CorruptFileError(uri, `"${field}" must be a string or null, got ${JSON.stringify(value)}`);
  }
  return value;
}

export const REFS_PREFIX = "_refs/";

/**
 * Tag and branch files from one listing of `_refs/` (no delimiter): one LIST where a listing of
 * each folder made two. Only `{tag}.json` directly in `tags/` and `{branch}.json` directly in
 * `branches/` count, as a delimited listing of each folder would have found them.
 */
async function refKeys(store: ObjectStore): Promise<{ tags: string[]; branches: string[] }> {
  const keys: string[] = [];
  for await (const object of store.list(REFS_PREFIX)) keys.push(object.key);
  return refKeysOf(keys);
}

/** The tag and branch files among listed keys (any others are ignored). */
function refKeysOf(keys: Iterable<string>): { tags: string[]; branches: string[] } {
  const tags: string[] = [];
  const branches: string[] = [];
  for (const key of keys) {
    if (!key.endsWith(REF_SUFFIX)) continue;
    for (const [prefix, found] of [
      [TAGS_PREFIX, tags],
      [BRANCHES_PREFIX, branches],
    ] as const) {
      if (key.startsWith(prefix) && !key.slice(prefix.length).includes("/")) found.push(key);
    }
  }
  return { tags, branches };
}

function refName(key: string, prefix: string): string {
  return key.slice(prefix.length, key.length - REF_SUFFIX.length);
}

async function readTag(store: ObjectStore, key: string): Promise<Tag> {
  const uri = store.uriOf(key);
  const json = await readJsonObject(store, key);
  return { name: refName(key, TAGS_PREFIX), version: versionField(json, "version", uri), branch: branchField(json, "branch", uri) };
}

export async function readBranch(store: ObjectStore, key: string): Promise<Branch> {
  const uri = store.uriOf(key);
  const json = await readJsonObject(store, key);
  return {
    name: refName(key, BRANCHES_PREFIX).replaceAll("%2F", "/"),
    parentBranch: branchField(json, "parentBranch", uri),
    parentVersion: versionField(json, "parentVersion", uri),
  };
}

/** A ref deleted between the listing and the GET is gone, like one never listed: null. */
async function unlessDeleted<T>(read: Promise<T>): Promise<T | null> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}

/**
 * All tags and branches, sorted by name. A missing `_refs/` folder means none. `listed`: the
 * keys under `_refs/` already listed (by another listing that covered the folder); saves the LIST.
 */
export async function readLanceRefs(store: ObjectStore, listed?: Iterable<string>): Promise<Refs> {
  const { tags: tagKeys, branches: branchKeys } = listed ? refKeysOf(listed) : await refKeys(store);
  const [tags, branches] = await Promise.all([
    mapConcurrent(tagKeys, REF_READ_CONCURRENCY, (key) => unlessDeleted(readTag(store, key))),
    mapConcurrent(branchKeys, REF_READ_CONCURRENCY, (key) => unlessDeleted(readBranch(store, key))),
  ]);
  const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return {
    tags: tags.filter((tag): tag is Tag => tag !== null).sort(byName),
    branches: branches.filter((branch): branch is Branch => branch !== null).sort(byName),
  };
}
