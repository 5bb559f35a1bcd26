/**
 * `<table>/_lakewarden/config`: per-table cleanup settings kept by lakewarden itself, for tables
 * whose writers cannot set `lakewarden.*` keys in the format's own config (LanceDB for Node has
 * no config API). A JSON object of `lakewarden.*` keys to text values, e.g.
 * `{"lakewarden.older_than": "30d"}`, written with conditional requests (`lakewarden config set`).
 * It lives under `_lakewarden/`, never inside the format's folders.
 *
 * Precedence (lib/maintenance/policy.ts): CLI flags, then the environment, then the table's own
 * config (Lance: the manifest's config map), then this file, then defaults. What is stored must
 * pass the policy's guards on its own: a short older_than or safety_window is stored only with
 * its acknowledgement (allow_short_retention=true, allow_short_safety_window=true) beside it.
 */
import type { ObjectStore } from "../store/object-store.ts";
import { ConflictError, NotFoundError, PreconditionFailedError } from "../store/errors.ts";
import { PolicyError } from "./errors.ts";
import { STORED_CONFIG_KEY } from "../model/layout.ts";
import { TABLE_CONFIG_KEYS, parseSetting, resolvePolicy, type PolicyField } from "./policy.ts";

export { STORED_CONFIG_KEY } from "../model/layout.ts";

/** The settings `lakewarden config set` accepts: the cleanup policy's keys. */
export const STORED_CONFIG_FIELDS: ReadonlyMap<string, PolicyField> = new Map((Object.entries(TABLE_CONFIG_KEYS) as [PolicyField, string][]).map(([field, key]) => [key, field]));

/** The stored settings; {} when there is no file. An unreadable file is an error naming it. */
export async function readStoredConfig(store: ObjectStore): Promise<Record<string, string>> {
  return (await readWithEtag(store)).config;
}

async function readWithEtag(store: ObjectStore): Promise<{ config: Record<string, string>; etag: string | null }> {
  let body: Uint8Array;
  let etag: string;
  try {
    ({ body, etag } = await store.get(STORED_CONFIG_KEY));
  } catch (error) {
    if (error instanceof NotFoundError) return { config: {}, etag: null };
    throw error;
  }
  const uri = store.uriOf(STORED_CONFIG_KEY);
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw new PolicyError(uri, "not valid JSON (fix or remove it: lakewarden config unset, or delete the file)");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value) || Object.values(value).some((v) => typeof v !== "string")) {
    throw new PolicyError(uri, 'not a JSON object of text values like {"lakewarden.older_than": "30d"}');
  }
  return { config: value as Record<string, string>, etag };
}

/** `older_than` or `lakewarden.older_than` → `lakewarden.older_than`; PolicyError for a key cleanup does not read. */
export function storedConfigKey(name: string, uri: string): string {
  const key = name.startsWith("lakewarden.") ? name : `lakewarden.${name}`;
  if (!STORED_CONFIG_FIELDS.has(key)) {
    throw new PolicyError(uri, `${JSON.stringify(name)} is not a setting lakewarden config stores (known: ${[...STORED_CONFIG_FIELDS.keys()].join(", ")})`);
  }
  return key;
}

/**
 * Sets and removes stored settings; each value is checked by the same parser cleanup uses.
 * Conditional on the ETag read (or create-only), retried when another writer got there first.
 */
export async function updateStoredConfig(store: ObjectStore, changes: { set?: Record<string, string>; unset?: readonly string[] }): Promise<Record<string, string>> {
  const uri = store.uriOf(STORED_CONFIG_KEY);
  const set = Object.entries(changes.set ?? {}).map(([name, value]) => {
    const key = storedConfigKey(name, uri);
    parseSetting(STORED_CONFIG_FIELDS.get(key)!, value, key, uri);
    return [key, value] as const;
  });
  const unset = (changes.unset ?? []).map((name) => storedConfigKey(name, uri));
  for (let attempt = 0; attempt < 5; attempt++) {
    const { config, etag } = await readWithEtag(store);
    const next: Record<string, string> = { ...config };
    for (const key of unset) delete next[key];
    for (const [key, value] of set) next[key] = value;
    resolvePolicy({}, {}, uri, next); // the guards: ShortSettingError, nothing written
    const body = new TextEncoder().encode(`${JSON.stringify(sortKeys(next), null, 2)}\n`);
    try {
      await store.put(STORED_CONFIG_KEY, body, { contentType: "application/json", ...(etag === null ? { ifNoneMatch: "*" as const } : { ifMatch: etag }) });
      return sortKeys(next);
    } catch (error) {
      if (error instanceof PreconditionFailedError || error instanceof ConflictError) continue;
      throw error;
    }
  }
  throw new PolicyError(uri, "changed by another writer on every attempt; try again");
}

function sortKeys(config: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(config).sort(([a], [b]) => (a < b ? -1 : 1)));
}
