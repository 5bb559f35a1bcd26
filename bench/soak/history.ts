/**
 * What the soak knows to be true, recorded by the writer at commit time and never read back
 * from the table: every version ever committed on main with the rows it holds, every live
 * branch's versions, the live tags. The checks compare what the table says against this.
 */
export interface Content {
  rows: number;
  /** Sum of `id` over the rows: the data itself, not only its count. */
  idSum: number;
}

export function sameContent(a: Content, b: Content): boolean {
  return a.rows === b.rows && a.idSum === b.idSum;
}

export function describeContent(content: Content | undefined): string {
  return content ? `${content.rows} rows, id sum ${content.idSum}` : "nothing recorded";
}

export interface BranchRecord {
  name: string;
  /** The main version it was created from. */
  parentVersion: number;
  versions: Map<number, Content>;
}

export class SoakHistory {
  /** Every version ever committed on main: never shrinks, removed versions included. */
  readonly main = new Map<number, Content>();
  readonly branches = new Map<string, BranchRecord>();
  /** Live tags (name → main version), as the writer made them. */
  readonly tags = new Map<string, number>();
  private waiters: Array<() => void> = [];

  get latest(): number {
    return Math.max(-1, ...this.main.keys());
  }

  recordMain(version: number, content: Content): void {
    this.main.set(version, content);
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** The content of `version`, waiting (bounded) for the writer to record a commit a reader saw first. */
  async contentOf(version: number, timeoutMs = 5000): Promise<Content | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (!this.main.has(version) && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    return this.main.get(version);
  }
}

/** mulberry32: a small seeded generator, so a run's choices can be replayed with --seed. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** One key of `weights`, with probability proportional to its weight. */
  weighted<K extends string>(weights: Record<K, number>): K {
    const entries = Object.entries(weights) as Array<[K, number]>;
    let roll = this.next() * entries.reduce((sum, [, w]) => sum + w, 0);
    for (const [key, weight] of entries) {
      roll -= weight;
      if (roll < 0) return key;
    }
    return entries.at(-1)![0];
  }
}
