/**
 * The requests a lookup started, so its caller can wait for every one to end (a load leaves no
 * request of its own running once it returns) without asking for answers it does not need.
 */
export class StartedRequests {
  private readonly started: Promise<unknown>[] = [];

  /** Tracks `request` and returns it; a rejection is still the caller's to handle, never unhandled here. */
  add<T>(request: Promise<T>): Promise<T> {
    request.catch(() => undefined);
    this.started.push(request);
    return request;
  }

  /** Settles once every request added so far has ended, whatever their outcome. */
  async settled(): Promise<void> {
    await Promise.allSettled(this.started);
  }
}
