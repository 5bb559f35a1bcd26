/**
 * A store wrapper for tests and benchmarks: fails chosen mutating requests, answers 409 on
 * chosen puts, and adds latency per request (to model S3 round trips on a local store).
 *
 * Mutating requests are puts and delete batches (deleteMany is split into batches of 1,000
 * keys, one request each, as on S3), numbered from 1 in the order they are made, shared by
 * every store derived with `scope()`. A request failed here never reaches the inner store but is
 * still counted in `stats`, as the request was made; everything else is counted by the inner store.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { ConflictError, StoreUnavailableError } from "../../lib/store/errors.ts";
import { checkKey } from "../../lib/store/keys.ts";
import type { ByteRange, DeleteResult, GetResult, ListOptions, ObjectInfo, ObjectStore, PutOptions, PutResult, RequestKind, RequestStats } from "../../lib/store/object-store.ts";

const DELETE_BATCH = 1000;
const PAGE_SIZE = 1000;

export interface InjectedFailure {
  /** 1-based number of the mutating request to fail. */
  at: number;
  /** The error to throw (default: StoreUnavailableError naming the object). */
  error?: (uri: string) => Error;
}

export interface FaultPlan {
  failMutations?: readonly InjectedFailure[];
  /** Answer 409 ConflictError on these puts: 1-based put numbers, or a predicate. */
  conflictOnPuts?: readonly number[] | ((key: string, putNumber: number) => boolean);
  /**
   * Answer these delete requests (1-based, counting delete batches only) like S3 under load:
   * 503 SlowDown for every key of the batch, reported as throttled failures, nothing deleted.
   */
  throttleDeletes?: readonly number[] | ((deleteNumber: number) => boolean);
  /** Delay before each request (and each further page of a listing): one value or per kind. */
  latencyMs?: number | Partial<Record<RequestKind, number>>;
}

interface SharedState {
  plan: FaultPlan;
  mutations: number;
  puts: number;
  deletes: number;
  throttled: number;
}

export class FaultInjectingStore implements ObjectStore {
  readonly inner: ObjectStore;
  private readonly state: SharedState;

  constructor(inner: ObjectStore, plan: FaultPlan = {}, shared?: SharedState) {
    this.inner = inner;
    this.state = shared ?? { plan, mutations: 0, puts: 0, deletes: 0, throttled: 0 };
  }

  /** The plan in force; replace it to change faults mid-test. */
  get plan(): FaultPlan {
    return this.state.plan;
  }

  set plan(plan: FaultPlan) {
    this.state.plan = plan;
  }

  /** Mutating requests made so far (failed ones included). */
  get mutationCount(): number {
    return this.state.mutations;
  }

  /** Delete requests answered with an injected SlowDown so far. */
  get throttledCount(): number {
    return this.state.throttled;
  }

  get putCount(): number {
    return this.state.puts;
  }

  get uri(): string {
    return this.inner.uri;
  }

  get stats(): RequestStats {
    return this.inner.stats;
  }

  uriOf(key: string): string {
    return this.inner.uriOf(key);
  }

  scope(subpath: string): FaultInjectingStore {
    return new FaultInjectingStore(this.inner.scope(subpath), this.state.plan, this.state);
  }

  async get(key: string, range?: ByteRange): Promise<GetResult> {
    await this.delay("get");
    return this.inner.get(key, range);
  }

  async head(key: string): Promise<ObjectInfo> {
    await this.delay("head");
    return this.inner.head(key);
  }

  async put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> {
    await this.delay("put");
    const mutation = ++this.state.mutations;
    const putNumber = ++this.state.puts;
    const uri = this.inner.uriOf(key);
    const failure = this.injectedFailure(mutation, uri);
    if (failure) {
      this.inner.stats.record("put");
      throw failure;
    }
    if (this.conflicts(key, putNumber)) {
      this.inner.stats.record("put");
      throw new ConflictError(`${uri}: conflicting concurrent request (409 ConditionalRequestConflict, injected); retry`, { uri });
    }
    return this.inner.put(key, body, options);
  }

  async *list(prefix: string, options?: ListOptions): AsyncIterable<ObjectInfo> {
    await this.delay("list");
    let inPage = 0;
    for await (const info of this.inner.list(prefix, options)) {
      if (inPage === PAGE_SIZE) {
        await this.delay("list");
        inPage = 0;
      }
      inPage++;
      yield info;
    }
  }

  async listPrefixes(prefix: string): Promise<string[]> {
    await this.delay("list");
    return this.inner.listPrefixes(prefix);
  }

  async deleteMany(keys: readonly string[]): Promise<DeleteResult> {
    // Validate everything before deleting anything (the inner store sees one batch at a time).
    for (const key of keys) checkKey(key, this.inner.uri);
    const result: DeleteResult = { deleted: [], failed: [] };
    for (let start = 0; start < keys.length; start += DELETE_BATCH) {
      const batch = keys.slice(start, start + DELETE_BATCH);
      await this.delay("delete");
      const failure = this.injectedFailure(++this.state.mutations, this.inner.uri);
      if (this.throttles(++this.state.deletes)) {
        this.state.throttled++;
        this.inner.stats.record("delete");
        const message = `${this.inner.uri}: SlowDown: Please reduce your request rate (503, injected)`;
        result.failed.push(...batch.map((key) => ({ key, message, throttled: true })));
        continue;
      }
      if (failure) {
        this.inner.stats.record("delete");
        // Like S3Store: a failed request reports each of its keys, it does not throw.
        result.failed.push(...batch.map((key) => ({ key, message: failure.message })));
        continue;
      }
      const partial = await this.inner.deleteMany(batch);
      result.deleted.push(...partial.deleted);
      result.failed.push(...partial.failed);
    }
    return result;
  }

  private injectedFailure(mutation: number, uri: string): Error | undefined {
    const spec = this.state.plan.failMutations?.find((f) => f.at === mutation);
    if (!spec) return undefined;
    return spec.error ? spec.error(uri) : new StoreUnavailableError(`${uri}: injected failure of mutating request #${mutation}`, { uri });
  }

  private throttles(deleteNumber: number): boolean {
    const rule = this.state.plan.throttleDeletes;
    if (!rule) return false;
    return typeof rule === "function" ? rule(deleteNumber) : rule.includes(deleteNumber);
  }

  private conflicts(key: string, putNumber: number): boolean {
    const rule = this.state.plan.conflictOnPuts;
    if (!rule) return false;
    return typeof rule === "function" ? rule(key, putNumber) : rule.includes(putNumber);
  }

  private async delay(kind: RequestKind): Promise<void> {
    const latency = this.state.plan.latencyMs;
    const ms = typeof latency === "number" ? latency : (latency?.[kind] ?? 0);
    if (ms > 0) await sleep(ms);
  }
}
