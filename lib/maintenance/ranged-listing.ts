/**
 * A prefix's objects after a key, in key order, with several of its listing's pages in flight.
 *
 * A listing is a chain of pages, each asked for once the one before it came back (S3's
 * continuation), so the 100 pages of a folder of 100,000 objects are 100 round trips one after
 * another. Here a page that comes back full has the rest of its key range cut at keys chosen from
 * the characters its own keys use, and the pieces are listed at once, each from its own start
 * (`startAfter`) up to and including the next piece's start. The objects come out exactly as one
 * listing gives them: in key order, each once. Where the cuts fall decides only how much goes out
 * together (a piece with nothing in it costs one empty page), never what is listed.
 */
import { compareKeys } from "../store/keys.ts";
import type { ObjectInfo, ObjectStore } from "../store/object-store.ts";

/** S3's page: a piece that comes back with this many objects may hold more. */
const PAGE_SIZE = 1000;
/** Pieces in flight at once, at most. */
const MAX_PIECES = 32;
/** Cuts made in a full piece's rest, at most. */
const MAX_CUTS = 15;
/** Positions (after the first where the rest's bounds differ) that cuts are made at. */
const CUT_DEPTH = 3;
/** Positions whose characters are the ones cut at: a name's few leading characters are often all the same. */
const CHARACTER_WINDOW = 8;

export interface RangedListingOptions {
  /** Objects per page (tests make it small). */
  pageSize?: number;
}

interface Piece {
  page: Promise<Page>;
  /** The pieces the rest of this one's range was cut into, asked for as soon as its page came back full. */
  rest: Promise<Piece[]>;
}

interface Page {
  objects: ObjectInfo[];
  /** The store gave a whole page inside the piece: there may be more of it. */
  full: boolean;
}

interface Walk {
  store: ObjectStore;
  prefix: string;
  pageSize: number;
  /** Pieces asked for and not yet taken. */
  outstanding: number;
}

export async function* listRanged(store: ObjectStore, prefix: string, after: string | null, options: RangedListingOptions = {}): AsyncGenerator<ObjectInfo> {
  const walk: Walk = { store, prefix, pageSize: options.pageSize ?? PAGE_SIZE, outstanding: 0 };
  // Depth first: a piece's objects, then its rest's pieces (each with its own rest) before the next piece.
  const next: Piece[] = [piece(walk, after, null)];
  while (next.length > 0) {
    const from = next.pop()!;
    const page = await from.page;
    walk.outstanding--;
    yield* page.objects;
    const rest = await from.rest;
    for (let i = rest.length - 1; i >= 0; i--) next.push(rest[i]!);
  }
}

function piece(walk: Walk, lower: string | null, upper: string | null): Piece {
  walk.outstanding++;
  const page = listPage(walk, lower, upper);
  const rest = page.then((got) => {
    if (!got.full) return [];
    // The rest, from the page's last key: cut, each piece asked for now, while the pieces before it are taken.
    const last = got.objects.at(-1)!.key;
    const room = Math.max(0, Math.min(MAX_CUTS, MAX_PIECES - walk.outstanding - 1));
    const bounds = [last, ...cutsBetween(walk.prefix, last, upper, got.objects, room), upper];
    return bounds.slice(0, -1).map((bound, i) => piece(walk, bound, bounds[i + 1]!));
  });
  // A piece no one waits for (the walk stopped before it) fails quietly.
  rest.catch(() => undefined);
  return { page, rest };
}

async function listPage(walk: Walk, lower: string | null, upper: string | null): Promise<Page> {
  const objects: ObjectInfo[] = [];
  let listed = 0;
  for await (const object of walk.store.list(walk.prefix, { ...(lower !== null ? { startAfter: lower } : {}), maxKeys: walk.pageSize })) {
    listed++;
    if (upper !== null && compareKeys(object.key, upper) > 0) return { objects, full: false };
    objects.push(object);
  }
  const last = objects.at(-1)?.key;
  return { objects, full: listed === walk.pageSize && (upper === null || (last !== undefined && compareKeys(last, upper) < 0)) };
}

/**
 * Keys strictly between `after` and `upper` to cut the rest of a piece at, ascending: `after`'s
 * own beginning, from the first position where it and `upper` differ and a few positions deeper,
 * followed by a character the page's keys use around that position (a folder of binary-named
 * files is cut at `0`/`1`, a hex-named one at hex digits, `p=1/`, `p=2/`... partitions at digits).
 */
export function cutsBetween(prefix: string, after: string, upper: string | null, objects: readonly ObjectInfo[], most: number): string[] {
  if (most <= 0) return [];
  let from = prefix.length;
  if (upper !== null) while (from < after.length && from < upper.length && after[from] === upper[from]) from++;
  const cuts = new Set<string>();
  for (let at = from; at < Math.min(after.length, from + CUT_DEPTH); at++) {
    const stem = after.slice(0, at);
    for (const character of charactersAround(objects, at)) {
      const cut = stem + character;
      if (compareKeys(cut, after) > 0 && (upper === null || compareKeys(cut, upper) < 0)) cuts.add(cut);
    }
  }
  const sorted = [...cuts].sort(compareKeys);
  if (sorted.length <= most) return sorted;
  // Evenly spread over the candidates, keeping their order.
  return Array.from({ length: most }, (_, i) => sorted[Math.floor(((i + 1) * sorted.length) / (most + 1))]!);
}

/** Printable ASCII characters the keys hold at `at` or the positions just after it. */
function charactersAround(objects: readonly ObjectInfo[], at: number): string[] {
  const seen = new Set<string>();
  for (const { key } of objects) {
    for (let i = at; i < Math.min(key.length, at + CHARACTER_WINDOW); i++) {
      const code = key.charCodeAt(i);
      if (code > 0x20 && code < 0x7f) seen.add(key[i]!);
    }
  }
  return [...seen];
}
