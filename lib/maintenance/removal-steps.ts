/**
 * The one place the pipeline reads a format's removal strategy (TableFormat.removal): what each
 * stage does for it, decided by its kind, exhaustively. Every stage asks these steps; none tests
 * which members a format has.
 *
 *   - commit-files-first: lakewarden's policy and refs decide, the removed versions' commit files
 *     go first, oldest first, then the files only they named;
 *   - format-plan: the format plans the whole removal from the listing (format-removal.ts checks
 *     the plan against the pipeline's guarantees), then it goes as a generic plan does;
 *   - metadata-commit: the format's rules decide which versions are due, the listing is checked
 *     against what its refs keep, and the commit that drops the versions is written on the
 *     plan's base before any file is deleted (after finishing one an earlier run left half done).
 */
import type { FormatRemovalRules, KeptTogether, MetadataCommitRemoval, RemovalInput, RemovalPlan, VersionFile, VersionRemoval } from "../formats/table-format.ts";
import type { ObjectInfo, ObjectStore } from "../store/object-store.ts";

export interface RemovalSteps {
  /** The format's own retention rules on the plan's base; null: lakewarden's policy and refs decide. */
  rules: ((store: ObjectStore, base: VersionFile, now: Date) => Promise<FormatRemovalRules>) | null;
  /** Removed versions a kept one still needs; null: the format's plan decides that itself. */
  keptTogether: KeptTogether | null;
  /** Run on every plan of a listing before it is planned, dry run included: throws when the listing and the metadata disagree. */
  checkListing: (store: ObjectStore, base: VersionFile, listing: Iterable<ObjectInfo>) => Promise<void>;
  /** The format's plan of the whole removal; null: the generic file rules plan it (file-plan.ts). */
  planRemoval: ((store: ObjectStore, input: RemovalInput) => Promise<RemovalPlan>) | null;
  /** True for a key that is a commit made after `base` (never a candidate). */
  committedAfter: (key: string, base: VersionFile) => boolean;
  /** The metadata commit written before any delete; null: versions go by deleting their commit files. */
  metadataCommit: Pick<MetadataCommitRemoval, "finishInterrupted" | "commit"> | null;
}

const NO_LISTING_CHECK = async (): Promise<void> => {};
const NEVER_COMMITTED_AFTER = (): boolean => false;

export function removalSteps(removal: VersionRemoval): RemovalSteps {
  switch (removal.kind) {
    case "commit-files-first":
      return { rules: null, keptTogether: removal.keptTogether, checkListing: NO_LISTING_CHECK, planRemoval: null, committedAfter: NEVER_COMMITTED_AFTER, metadataCommit: null };
    case "format-plan":
      return { rules: null, keptTogether: null, checkListing: NO_LISTING_CHECK, planRemoval: removal.planRemoval, committedAfter: NEVER_COMMITTED_AFTER, metadataCommit: null };
    case "metadata-commit":
      return {
        rules: removal.rules,
        keptTogether: removal.keptTogether,
        checkListing: removal.checkReferencedFiles,
        planRemoval: null,
        committedAfter: removal.committedAfter,
        metadataCommit: { finishInterrupted: removal.finishInterrupted, commit: removal.commit },
      };
    default:
      return unknownRemoval(removal);
  }
}

function unknownRemoval(removal: never): never {
  throw new Error(`unknown removal strategy ${JSON.stringify((removal as { kind?: unknown }).kind)}: nothing deleted`);
}
