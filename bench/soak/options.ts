/** Command line of `npm run soak`: how long, on which store, which random seed, where to report. */
export type SoakStoreKind = "local" | "s3";

export interface SoakOptions {
  minutes: number;
  store: SoakStoreKind;
  seed: number;
  /** The results file; this run's store section in it is replaced, the other kept. */
  out: string;
  /** Keep the table's directory after the run (local only), to look at it. */
  keep: boolean;
}

export const USAGE = `usage: npm run soak -- [--minutes N] [--store local|s3] [--seed N] [--out file] [--keep]

A LanceDB writer commits in a loop (appends, deletes, updates, overwrites, compactions, index,
tag and branch creation and removal) while lakewarden cleanup runs again and again with an
aggressive policy (older-than 0s, retain 1-3), heads are written after commits and readers load
the table through LanceDB and openTable. After every cleanup round the invariants are checked.
  --minutes N   how long the writer runs (default 3; at most 120)
  --store       local (a temp directory, default) or s3 (fauxqs in this process)
  --seed N      random seed for the writer's choices (default: from the clock; printed)
  --out file    results markdown (default bench/soak-results/soak.md, not committed;
                the published bench/results/soak.md is only written when named here)
  --keep        keep the local table directory afterwards`;

export class SoakUsageError extends Error {}

export function parseSoakOptions(argv: readonly string[]): SoakOptions {
  const options: SoakOptions = { minutes: 3, store: "local", seed: Date.now() % 2 ** 31, out: "bench/soak-results/soak.md", keep: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = (): string => {
      const next = argv[++i];
      if (next === undefined) throw new SoakUsageError(`${arg} needs a value`);
      return next;
    };
    switch (arg) {
      case "--minutes": {
        const minutes = Number(value());
        if (!Number.isFinite(minutes) || minutes <= 0 || minutes > 120) throw new SoakUsageError(`--minutes must be a number in (0, 120], got ${argv[i]}`);
        options.minutes = minutes;
        break;
      }
      case "--store": {
        const store = value();
        if (store !== "local" && store !== "s3") throw new SoakUsageError(`--store must be local or s3, got ${store}`);
        options.store = store;
        break;
      }
      case "--seed": {
        const seed = Number(value());
        if (!Number.isSafeInteger(seed) || seed < 0) throw new SoakUsageError(`--seed must be a non-negative integer, got ${argv[i]}`);
        options.seed = seed;
        break;
      }
      case "--out":
        options.out = value();
        break;
      case "--keep":
        options.keep = true;
        break;
      case "--help":
      case "-h":
        throw new SoakUsageError(USAGE);
      default:
        throw new SoakUsageError(`unknown argument ${arg}\n${USAGE}`);
    }
  }
  return options;
}
