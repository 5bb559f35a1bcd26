/** Keys of a listing, with each object's metadata on demand (see ObjectStore.listKeys). */
import type { ListedKey, ListOptions, ObjectStore } from "./object-store.ts";

export type { ListedKey } from "./object-store.ts";

/** The store's own keys-only listing when it has one; else `list`, whose metadata came with the page. */
export async function* listKeys(store: ObjectStore, prefix: string, options?: ListOptions): AsyncIterable<ListedKey> {
  if (store.listKeys) {
    yield* store.listKeys(prefix, options);
    return;
  }
  for await (const object of store.list(prefix, options)) yield { key: object.key, info: () => object };
}
