/**
 * A progress line for commands that may read many version files (`versions` on a long history
 * that no checkpoint or head covers yet): on a terminal only, from one second in, it counts
 * the version files read, redrawn in place on stderr and erased when done.
 */
import type { ObjectStore } from "../store/object-store.ts";
import type { CliIO } from "./io.ts";

export interface ReadProgress {
  /** The store to read through: the same store, its version-file GETs counted. */
  store: ObjectStore;
  /** Erases the line, if one was drawn. */
  done(): void;
}

export function withReadProgress(
  store: ObjectStore,
  io: CliIO,
  /** `prefix`: the folder(s) whose GETs count; `total`: an upper bound, 0 when unknown. */
  options: { prefix: string | readonly string[]; total: number; label: string; showAfterMs?: number; redrawEveryMs?: number; now?: () => number },
): ReadProgress {
  if (!io.interactive) return { store, done: () => undefined };
  const prefixes = typeof options.prefix === "string" ? [options.prefix] : options.prefix;
  const now = options.now ?? Date.now;
  const started = now();
  const showAfter = options.showAfterMs ?? 1000;
  const redrawEvery = options.redrawEveryMs ?? 100;
  let read = 0;
  let drawnAt: number | null = null;
  const draw = (): void => {
    const at = now();
    if (at - started < showAfter || (drawnAt !== null && at - drawnAt < redrawEvery)) return;
    drawnAt = at;
    io.err(`\r\x1b[K${options.label}: ${read}${options.total > 0 ? ` of at most ${Math.max(options.total, read)}` : ""} read`);
  };
  const counted = new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (property === "get" && typeof value === "function") {
        return (key: string, ...rest: unknown[]) => {
          const result = (value as (...args: unknown[]) => Promise<unknown>).call(target, key, ...rest);
          if (prefixes.some((prefix) => key.startsWith(prefix))) {
            return result.then((answer) => {
              read++;
              draw();
              return answer;
            });
          }
          return result;
        };
      }
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return {
    store: counted,
    done() {
      if (drawnAt !== null) io.err("\r\x1b[K");
    },
  };
}
