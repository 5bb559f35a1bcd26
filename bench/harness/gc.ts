/**
 * A full garbage collection, off the clock, before a timed run of a command that takes a few
 * milliseconds: what the harness itself left (LanceDB's run, the manifests it decodes to derive
 * the expected records: ~100 MB of objects at 100K fragments) is collected before the run, not
 * during it. A user's `lakewarden versions` starts in a process of its own, with none of it.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

export function collectGarbage(): void {
  gc();
}
