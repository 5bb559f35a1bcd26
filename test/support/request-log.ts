/**
 * Every request a LocalStore makes, with its start and end on a logical clock, each answered after
 * a small pause (a round trip): what the round-trip tests count dependent round trips on. A test may
 * hold a request back (`hold`) to see what happens before its answer.
 */
import type { LocalStore } from "../../lib/store/local-store.ts";

export interface LoggedRequest {
  what: string;
  start: number;
  end: number;
}

export interface RequestLogOptions {
  /** The pause before each answer (ms; default 15). */
  latencyMs?: number;
  /** A promise the request waits for before it is answered (after its pause), or undefined. */
  hold?: (what: string) => Promise<void> | undefined;
}

/** Records every request's start and end on `store`, each answered after the pause. */
export function recordRequests(store: LocalStore, options: RequestLogOptions = {}): LoggedRequest[] {
  const latency = options.latencyMs ?? 15;
  const requests: LoggedRequest[] = [];
  let clock = 0;
  // A logical clock: "after" means after, whatever the timer's resolution.
  const tick = () => ++clock;
  const timed = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    const request = { what, start: tick(), end: Number.POSITIVE_INFINITY };
    requests.push(request);
    try {
      await new Promise<void>((resolve) => setTimeout(resolve, latency));
      await options.hold?.(what);
      return await run();
    } finally {
      request.end = tick();
    }
  };
  const get = store.get.bind(store);
  store.get = (key, range) => timed(`GET ${key}${range ? ` ${JSON.stringify(range)}` : ""}`, () => get(key, range));
  const head = store.head.bind(store);
  store.head = (key) => timed(`HEAD ${key}`, () => head(key));
  const listPrefixes = store.listPrefixes.bind(store);
  store.listPrefixes = (prefix) => timed(`LIST ${prefix} (prefixes)`, () => listPrefixes(prefix));
  // A listing is one request from its first page asked to its last given (these tables list in one page).
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

/** The longest chain of requests each started after the one before it ended. */
export function dependentRoundTrips(requests: readonly LoggedRequest[]): number {
  const depth = new Map<LoggedRequest, number>();
  for (const request of [...requests].sort((a, b) => a.start - b.start)) {
    const before = requests.filter((other) => other.end < request.start).map((other) => depth.get(other) ?? 0);
    depth.set(request, 1 + Math.max(0, ...before));
  }
  return Math.max(0, ...depth.values());
}

/** A GET of a table's Parquet data file (not of its log or metadata). */
export const isDataGet = (r: LoggedRequest) => r.what.startsWith("GET ") && r.what.split(" ")[1]!.endsWith(".parquet") && !r.what.startsWith("GET _delta_log/");
