import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { LeaseHeldError, LeaseLostError } from "../../lib/maintenance/errors.ts";
import { LEASE_KEY, Lease, readLease } from "../../lib/maintenance/lease.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { makeTempDir, removeDir } from "../support/lance-datasets.ts";

let moto: MotoHandle;
beforeAll(async () => {
  moto = await startMotoServer({ buckets: ["leases"] });
});
afterAll(() => moto?.stop());

const backends: [string, () => Promise<{ store: ObjectStore; cleanup: () => Promise<void> }>][] = [
  [
    "local disk",
    async () => {
      const dir = await makeTempDir("lw-lease-");
      return { store: new LocalStore(dir), cleanup: () => removeDir(dir) };
    },
  ],
  // moto's server enforces If-Match / If-None-Match itself: no wrapper between the lease and S3's answers.
  [
    "S3 (moto_server)",
    async () => {
      const s3 = openStore(`s3://leases/t-${Math.random().toString(36).slice(2)}.lance`, {
        s3: { endpoint: moto.endpoint, region: moto.region, credentials: moto.credentials, forcePathStyle: true },
      });
      return { store: s3, cleanup: async () => {} };
    },
  ],
];

describe.each(backends)("cleanup lease on %s", (_name, make) => {
  let store: ObjectStore;
  let cleanup: () => Promise<void>;
  let clock: number;
  const now = () => new Date(clock);

  beforeEach(async () => {
    ({ store, cleanup } = await make());
    clock = Date.parse("2026-11-01T00:00:00Z");
  });
  afterEach(() => cleanup());

  it("one holder at a time; the other stops with a message naming the lease and the holder", async () => {
    const first = await Lease.acquire(store, { runId: "run-one", owner: "host-a:1", now, durationMs: 60_000 });
    const second = Lease.acquire(store, { runId: "run-two", now, durationMs: 60_000 });
    await expect(second).rejects.toThrow(LeaseHeldError);
    await expect(Lease.acquire(store, { now })).rejects.toThrow(
      `${store.uriOf(LEASE_KEY)}: another cleanup holds this table's lease (run run-one on host-a:1, since 2026-11-01T00:00:00.000Z, until 2026-11-01T00:01:00.000Z); this run stops without touching the table`,
    );
    expect(await first.release()).toBe(true);
    const third = await Lease.acquire(store, { runId: "run-three", now });
    expect(third.tookOverFrom?.run_id).toBe("run-one");
  });

  it("an expired lease is taken over with If-Match; the old holder then learns it lost it", async () => {
    const stale = await Lease.acquire(store, { runId: "stale", now, durationMs: 60_000 });
    clock += 61_000;
    const fresh = await Lease.acquire(store, { runId: "fresh", now, durationMs: 60_000 });
    expect(fresh.tookOverFrom?.run_id).toBe("stale");
    expect(() => stale.assertHeld()).toThrow(LeaseLostError);
    await expect(stale.renew()).rejects.toThrow(LeaseLostError);
    expect(await stale.release()).toBe(false);
    expect((await readLease(store)).record?.run_id).toBe("fresh");
  });

  it("two contenders for an expired lease: exactly one wins", async () => {
    await Lease.acquire(store, { runId: "dead", now, durationMs: 1000 });
    clock += 5000;
    const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => Lease.acquire(store, { runId: `c${i}`, now })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results) if (r.status === "rejected") expect(r.reason).toBeInstanceOf(LeaseHeldError);
  });

  it("renewal extends the lease while held", async () => {
    const lease = await Lease.acquire(store, { runId: "long", now, durationMs: 60_000 });
    clock += 40_000;
    await lease.renewIfDue();
    expect(lease.expiresAt.getTime()).toBe(clock + 60_000);
    clock += 50_000;
    await expect(Lease.acquire(store, { now })).rejects.toThrow(LeaseHeldError);
  });

  it("renewals that overlap (parallel delete batches) share one conditional write and keep the lease", async () => {
    const lease = await Lease.acquire(store, { runId: "parallel", now, durationMs: 60_000 });
    clock += 40_000;
    await Promise.all([lease.renewIfDue(), lease.renewIfDue(), lease.renewIfDue(), lease.renewIfDue()]);
    expect(lease.expiresAt.getTime()).toBe(clock + 60_000);
    await lease.renew();
    expect(await lease.release()).toBe(true);
  });

  it("an unreadable lease body can be taken over", async () => {
    await store.put(LEASE_KEY, new TextEncoder().encode("{not json"));
    const lease = await Lease.acquire(store, { runId: "after-garbage", now });
    expect(lease.tookOverFrom).toBeNull();
    expect((await readLease(store)).record?.run_id).toBe("after-garbage");
  });
});
