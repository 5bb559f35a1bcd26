/**
 * Requests as a chain of dependent round trips: every request a store serves answers after a
 * delay, like S3 at a distance; a request that starts after another has ended depends on it, and
 * the longest such chain is the number of round trips the caller waits for, whatever its CPU.
 * (The head loader's tests count the same for a load: test/head/loader-round-trips.test.ts.)
 */
import type { LocalStore } from "../../lib/store/local-store.ts";

export interface TimedRequest {
  what: string;
  start: number;
  end: number;
}

/** Records every request's start and end on `store` (its own methods replaced), each answered after `latencyMs`. */
export function recordRequests(store: LocalStore, latencyMs: number): TimedRequest[] {
  const requests: TimedRequest[] = [];
  let clock = 0;
  // A logical clock: "after" means after, whatever the timer's resolution.
  const tick = () => ++clock;
  const timed = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    const request = { what, start: tick(), end: Number.POSITIVE_INFINITY };
    requests.push(request);
    try {
      await new Promise<void>((resolve) => setTimeout(resolve, latencyMs));
      return await run();
    } finally {
      request.end = tick();
    }
  };
  const get = store.get.bind(store);
  store.get = (key, range) => timed(`GET ${key}${range ? ` ${JSON.stringify(range)}` : ""}`, () => get(key, range));
  const head = store.head.bind(store);
  store.head = (key) => timed(`HEAD ${key}`, () => head(key));
  const put = store.put.bind(store);
  store.put = (key, body, options) => timed(`PUT ${key}${options?.ifNoneMatch ? " if-none-match" : options?.ifMatch ? " if-match" : ""}`, () => put(key, body, options));
  const deleteMany = store.deleteMany.bind(store);
  store.deleteMany = (keys) => timed(`DELETE ${keys.length} key(s), first ${keys[0]}`, () => deleteMany(keys));
  const listPrefixes = store.listPrefixes.bind(store);
  store.listPrefixes = (prefix) => timed(`LIST ${prefix} (prefixes)`, () => listPrefixes(prefix));
  // A listing is one request from its first page asked to its last given (small tables list in one page).
  const timedList =
    <T>(kind: string, list: (prefix: string, options?: Parameters<LocalStore["list"]>[1]) => AsyncIterable<T>) =>
    (prefix: string, options?: Parameters<LocalStore["list"]>[1]): AsyncIterable<T> => ({
      async *[Symbol.asyncIterator]() {
        const entries = await timed(`${kind} ${prefix}${options?.startAfter ? ` after ${options.startAfter}` : ""}`, async () => {
          const all: T[] = [];
          for await (const entry of list(prefix, options)) all.push(entry);
          return all;
        });
        yield* entries;
      },
    });
  store.list = timedList("LIST", store.list.bind(store));
  if (store.listKeys) store.listKeys = timedList("LIST", store.listKeys.bind(store));
  return requests;
}

/** The longest chain of requests each started after the one before it ended, and that chain. */
export function longestChain(requests: readonly TimedRequest[]): TimedRequest[] {
  const best = new Map<TimedRequest, TimedRequest[]>();
  for (const request of [...requests].sort((a, b) => a.start - b.start)) {
    let longest: TimedRequest[] = [];
    for (const other of requests) {
      const chain = other.end < request.start ? best.get(other) : undefined;
      if (chain && chain.length > longest.length) longest = chain;
    }
    best.set(request, [...longest, request]);
  }
  let result: TimedRequest[] = [];
  for (const chain of best.values()) if (chain.length > result.length) result = chain;
  return result;
}
