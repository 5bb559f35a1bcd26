/**
 * Writes the head after commits, as the on-commit Lambda does: notifications coalesce, and
 * each write is for the latest version at that moment. Never more than one write at a time.
 */
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";

export interface HeadFollowerStats {
  writes: number;
  /** By action: created, replaced, skipped-same-version, skipped-newer-present. */
  actions: Map<string, number>;
  errors: Map<string, number>;
}

export class HeadFollower {
  readonly stats: HeadFollowerStats = { writes: 0, actions: new Map(), errors: new Map() };
  private readonly store: ObjectStore;
  private pending = false;
  private running: Promise<void> | null = null;

  constructor(store: ObjectStore) {
    this.store = store;
  }

  notify(): void {
    this.pending = true;
    this.running ??= this.drain().finally(() => {
      this.running = null;
    });
  }

  /** Resolves when no write is running or pending. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    while (this.pending) {
      this.pending = false;
      try {
        const result = await writeTableHead(this.store);
        this.stats.writes++;
        this.stats.actions.set(result.action, (this.stats.actions.get(result.action) ?? 0) + 1);
      } catch (error) {
        const message = (error as Error).message.split("\n")[0]!;
        this.stats.errors.set(message, (this.stats.errors.get(message) ?? 0) + 1);
      }
    }
  }
}
