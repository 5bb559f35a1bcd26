import { NotFoundError } from "./errors.ts";
import type { ObjectStore } from "./object-store.ts";

/** Whether `key` exists (one HEAD); any answer but "not found" is the caller's error. */
export async function objectExists(store: ObjectStore, key: string): Promise<boolean> {
  try {
    await store.head(key);
    return true;
  } catch (error) {
    if (error instanceof NotFoundError) return false;
    throw error;
  }
}
