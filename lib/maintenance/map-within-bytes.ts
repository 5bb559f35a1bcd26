/**
 * mapConcurrent with a second bound: the bytes of the items in flight. Cleanup reads every
 * version file at once up to its concurrency; for small files that is the request count that
 * matters, for big ones the memory: 16 version files of 100,000 fragments each are ~150 MB of
 * bodies and their decoding in flight at once, for a decode that runs on one thread anyway.
 * An item larger than the whole budget still runs, alone.
 */
export interface WithinBytes<T> {
  concurrency: number;
  /** The most bytes (by `sizeOf`) in flight at once. */
  bytes: number;
  sizeOf: (item: T) => number;
}

export async function mapWithinBytes<T, R>(items: readonly T[], bounds: WithinBytes<T>, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const { concurrency, bytes, sizeOf } = bounds;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  const results = new Array<R>(items.length);
  let next = 0;
  let inFlight = 0;
  let bytesInFlight = 0;
  let failure: { error: unknown } | null = null;
  return new Promise<R[]>((resolve, reject) => {
    const startMore = (): void => {
      if (failure !== null) {
        if (inFlight === 0) reject(failure.error);
        return;
      }
      if (next === items.length && inFlight === 0) {
        resolve(results);
        return;
      }
      while (next < items.length && inFlight < concurrency) {
        const size = Math.max(0, sizeOf(items[next]!));
        // Within the budget, or alone: an item over the budget must still run.
        if (inFlight > 0 && bytesInFlight + size > bytes) break;
        const index = next++;
        inFlight++;
        bytesInFlight += size;
        fn(items[index]!, index).then(
          (result) => {
            results[index] = result;
            inFlight--;
            bytesInFlight -= size;
            startMore();
          },
          (error: unknown) => {
            failure ??= { error };
            inFlight--;
            bytesInFlight -= size;
            startMore();
          },
        );
      }
    };
    startMore();
  });
}
