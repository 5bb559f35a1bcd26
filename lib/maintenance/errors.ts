/**
 * Errors of the cleanup pipeline. Each extends the store or format error it is a case of,
 * so the CLI prints it as the one line it is, naming the object concerned.
 */
import { StoreError } from "../store/errors.ts";
import { TableFormatError } from "../formats/errors.ts";

/** A retention setting (table config key or caller option) that cannot be used. */
export class PolicyError extends TableFormatError {}

/** A setting below its safe minimum (older-than < 7 days, safety window < 1 hour) that no source acknowledged. */
export class ShortSettingError extends PolicyError {}

/** Another cleaner holds the table's lease and it has not expired: this run must not start. */
export class LeaseHeldError extends StoreError {}

/** This run's lease was taken over or removed while it ran: it must stop before deleting more. */
export class LeaseLostError extends StoreError {}

/** The table changed in a way cleanup cannot plan around (the latest version went back): nothing was deleted. */
export class TableChangedError extends TableFormatError {}

/** The format's removal commit lost to another writer's commit on the base the plan read (create-only write refused): nothing was deleted, a new plan on the new base is due. */
export class RemovalCommitLostError extends TableChangedError {}
