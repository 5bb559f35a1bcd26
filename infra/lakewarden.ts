/**
 * The reusable construct: drop `new Lakewarden(this, "Lakewarden", { tables: [...] })` into any
 * stack. Secure defaults (encrypted, TLS-only bucket and queues, DLQs with alarms, scoped IAM);
 * every default can be overridden through the `...Props` props, and an existing bucket can be
 * passed in instead of creating one (the aws-solutions-constructs convention).
 *
 *   S3 (version files) → commit queue (+DLQ) → on-commit: write heads
 *   schedule (+DLQ) → schedule-cleanup → cleanup queue (FIFO, +DLQ) → cleanup-table: clean one table
 *                                          ↑ a run stopped for time sends its table a continuation
 *
 * The cleanup queue is FIFO with the table as message group: SQS hands out one message per table
 * at a time, and a continuation becomes visible only once the run that sent it acknowledged its
 * own message, so one cleaner per table rests on the queue as well as on the lease.
 */
import { Duration, RemovalPolicy, Size } from "aws-cdk-lib";
import { Alarm, ComparisonOperator, Metric, TreatMissingData, type IAlarmAction } from "aws-cdk-lib/aws-cloudwatch";
import { Rule, Schedule } from "aws-cdk-lib/aws-events";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { NodejsFunction, type NodejsFunctionProps } from "aws-cdk-lib/aws-lambda-nodejs";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { BlockPublicAccess, Bucket, BucketEncryption, EventType, type BucketProps, type IBucket } from "aws-cdk-lib/aws-s3";
import { SqsDestination } from "aws-cdk-lib/aws-s3-notifications";
import { Queue, QueueEncryption, type QueueProps } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { DEFAULT_MAX_CONTINUATIONS, ENV } from "../functions/shared/environment.ts";
import { METRIC } from "../functions/shared/observability.ts";
import { ENVIRONMENT_KEYS } from "../lib/maintenance/policy.ts";
import { FUNCTION_ARCHITECTURE, FUNCTION_RUNTIME, functionCode, type FunctionName } from "./function-bundling.ts";
import { resolveSettings, type LakewardenSettings, type SettingsInput } from "./settings.ts";
import { commitNotificationFilters } from "../lib/formats/index.ts";
import {
  deleteTableObjectsStatement,
  discoverTablesStatement,
  glueTablesStatement,
  readCatalogSecretsStatement,
  readTablesStatements,
  writeLakewardenStatement,
} from "./table-access.ts";

export interface LakewardenProps extends SettingsInput {
  /** Look after tables in this bucket instead of creating one. */
  existingBucketObj?: IBucket;
  /** Overrides for the bucket created when no `existingBucketObj` is given. */
  bucketProps?: Partial<BucketProps>;
  /** Overrides for the commit queue (S3 events → on-commit). */
  commitQueueProps?: Partial<QueueProps>;
  /** Overrides for the cleanup queue (schedule-cleanup → cleanup-table). */
  cleanupQueueProps?: Partial<QueueProps>;
  /** Overrides per function (memory, timeout, environment additions...). */
  onCommitFunctionProps?: Partial<NodejsFunctionProps>;
  scheduleCleanupFunctionProps?: Partial<NodejsFunctionProps>;
  cleanupTableFunctionProps?: Partial<NodejsFunctionProps>;
  /** Where alarms notify (for example an SnsAction); none by default. */
  alarmActions?: IAlarmAction[];
  /** Receives before the commit queue gives a message to its DLQ (default 5). */
  commitMaxReceiveCount?: number;
  /** Continuations one scheduled cleanup request may chain (default 20); reaching it raises an alarm. */
  maxContinuations?: number;
  /** Cleanup runs stopped for time in an hour at which the stopped-for-time alarm fires (default 12: cleanup cannot keep up). */
  stoppedForTimeAlarmThreshold?: number;
  /** Receives before the cleanup queue gives a message to its DLQ (default 3). */
  cleanupMaxReceiveCount?: number;
  /** Cleanup runs allowed at once across tables (SQS event source maxConcurrency, default 5). */
  cleanupConcurrency?: number;
}

/** The timeouts the queues' visibility timeouts are derived from. */
const ON_COMMIT_TIMEOUT = Duration.minutes(1);
const SCHEDULE_CLEANUP_TIMEOUT = Duration.minutes(5);
const CLEANUP_TABLE_TIMEOUT = Duration.minutes(15);

export class Lakewarden extends Construct {
  readonly settings: LakewardenSettings;
  readonly bucket: IBucket;
  readonly commitQueue: Queue;
  readonly commitDeadLetterQueue: Queue;
  readonly cleanupQueue: Queue;
  readonly cleanupDeadLetterQueue: Queue;
  /** Where EventBridge puts schedule events it could not deliver to schedule-cleanup. */
  readonly scheduleDeadLetterQueue: Queue;
  readonly onCommitFunction: NodejsFunction;
  readonly scheduleCleanupFunction: NodejsFunction;
  readonly cleanupTableFunction: NodejsFunction;
  readonly cleanupSchedule: Rule;
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: LakewardenProps) {
    super(scope, id);
    this.settings = resolveSettings(props);
    this.bucket = props.existingBucketObj ?? this.createBucket(props.bucketProps);

    const onCommitTimeout = props.onCommitFunctionProps?.timeout ?? ON_COMMIT_TIMEOUT;
    const cleanupTimeout = props.cleanupTableFunctionProps?.timeout ?? CLEANUP_TABLE_TIMEOUT;

    this.commitDeadLetterQueue = this.createQueue("CommitDeadLetterQueue", { retentionPeriod: Duration.days(14) });
    this.commitQueue = this.createQueue("CommitQueue", {
      // AWS's rule of thumb: six times the function timeout, so a retried batch is not received twice.
      visibilityTimeout: Duration.seconds(onCommitTimeout.toSeconds() * 6),
      deadLetterQueue: { queue: this.commitDeadLetterQueue, maxReceiveCount: props.commitMaxReceiveCount ?? 5 },
      ...props.commitQueueProps,
    });
    // FIFO, the table as message group (functions/shared/cleanup-request.ts); a FIFO queue's DLQ is FIFO too.
    this.cleanupDeadLetterQueue = this.createQueue("CleanupDeadLetterQueue", { retentionPeriod: Duration.days(14), fifo: true });
    this.cleanupQueue = this.createQueue("CleanupQueue", {
      fifo: true,
      visibilityTimeout: Duration.seconds(cleanupTimeout.toSeconds() * 6),
      deadLetterQueue: { queue: this.cleanupDeadLetterQueue, maxReceiveCount: props.cleanupMaxReceiveCount ?? 3 },
      ...props.cleanupQueueProps,
    });
    this.scheduleDeadLetterQueue = this.createQueue("ScheduleTargetDeadLetterQueue", { retentionPeriod: Duration.days(14) });

    this.notifyCommits();

    const scopeEnvironment = this.scopeEnvironment();
    this.onCommitFunction = this.createFunction(
      "OnCommit",
      "on-commit",
      {
        timeout: ON_COMMIT_TIMEOUT,
        memorySize: 1024,
        environment: {
          ...scopeEnvironment,
          ...(this.settings.head.codec !== undefined ? { [ENV.headCodec]: this.settings.head.codec } : {}),
          ...(this.settings.head.inlineBytes !== undefined ? { [ENV.headInlineBytes]: String(this.settings.head.inlineBytes) } : {}),
          // A catalog-owned table's head is the catalog's current metadata, not the newest file.
          ...this.catalogEnvironment(),
        },
      },
      props.onCommitFunctionProps,
    );
    this.scheduleCleanupFunction = this.createFunction(
      "ScheduleCleanup",
      "schedule-cleanup",
      {
        timeout: SCHEDULE_CLEANUP_TIMEOUT,
        memorySize: 256,
        environment: {
          ...scopeEnvironment,
          [ENV.cleanupQueueUrl]: this.cleanupQueue.queueUrl,
          [ENV.discoveryDepth]: String(this.settings.discoveryDepth),
        },
      },
      props.scheduleCleanupFunctionProps,
    );
    this.cleanupTableFunction = this.createFunction(
      "CleanupTable",
      "cleanup-table",
      {
        timeout: CLEANUP_TABLE_TIMEOUT,
        // 1,769 MB is one full vCPU: manifests decode and checkpoints encode on the CPU.
        memorySize: 1769,
        // A run keeps a page of its listing and plan in memory and the rest in /tmp (86 MiB for
        // a million files, lib/maintenance/spill.ts): 2 GiB holds over 20 million.
        ephemeralStorageSize: Size.gibibytes(2),
        environment: {
          ...scopeEnvironment,
          // Set ones override each table's own settings (with a warning in the run's report), as the
          // environment does on the command line (lib/maintenance/policy.ts). Unset ones stay unset: a
          // value in the environment counts as the operator's choice, which on an Iceberg table keeps
          // snapshots beyond the table's own retention.
          ...this.retentionEnvironment(),
          // A run stopped for time continues through the cleanup queue.
          [ENV.cleanupQueueUrl]: this.cleanupQueue.queueUrl,
          [ENV.maxContinuations]: String(props.maxContinuations ?? DEFAULT_MAX_CONTINUATIONS),
          ...(this.settings.minWorkPerRun !== undefined ? { [ENV.minWorkPerRun]: String(this.settings.minWorkPerRun) } : {}),
          // A catalog-owned table expires through the catalog's own commit.
          ...this.catalogEnvironment(),
        },
      },
      props.cleanupTableFunctionProps,
    );

    this.grantAccess();

    this.onCommitFunction.addEventSource(new SqsEventSource(this.commitQueue, { batchSize: 10, reportBatchItemFailures: true }));
    this.cleanupTableFunction.addEventSource(
      // One table per invocation: a run has the whole timeout for itself.
      new SqsEventSource(this.cleanupQueue, {
        batchSize: 1,
        reportBatchItemFailures: true,
        maxConcurrency: props.cleanupConcurrency ?? 5,
      }),
    );

    this.cleanupSchedule = new Rule(this, "CleanupSchedule", {
      description: "lakewarden: enqueue a cleanup of every table",
      schedule: Schedule.expression(this.settings.cleanupSchedule),
      targets: [new LambdaFunction(this.scheduleCleanupFunction, { retryAttempts: 2, deadLetterQueue: this.scheduleDeadLetterQueue })],
    });

    this.createAlarms(props.alarmActions ?? [], props.stoppedForTimeAlarmThreshold ?? 12);
  }

  private createBucket(overrides: Partial<BucketProps> | undefined): Bucket {
    return new Bucket(this, "TableBucket", {
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      // Table data outlives the stack: deleting the stack must never delete the lake.
      removalPolicy: RemovalPolicy.RETAIN,
      ...overrides,
    });
  }

  private createQueue(id: string, props: QueueProps): Queue {
    return new Queue(this, id, {
      // SSE-SQS, not the AWS-managed KMS key: S3 cannot publish to a queue encrypted with alias/aws/sqs.
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      ...props,
    });
  }

  /**
   * S3 notification filters for every registered format's commit files: under a table root one
   * per format's commit folder (they never overlap); under a table prefix one per commit-file
   * suffix (S3 filters have no middle wildcard), and the handler asks the format registry which
   * keys are commits. S3 notifications rather than EventBridge rules: no extra service between
   * the bucket and the queue, and the same event shape the handler already reads.
   */
  private notifyCommits(): void {
    const destination = new SqsDestination(this.commitQueue);
    for (const filter of commitNotificationFilters(this.settings.tables, this.settings.tablePrefixes)) {
      this.bucket.addEventNotification(EventType.OBJECT_CREATED, destination, filter);
    }
  }

  private scopeEnvironment(): Record<string, string> {
    const uri = (path: string): string => `s3://${this.bucket.bucketName}/${path}`;
    return {
      [ENV.tables]: JSON.stringify(this.settings.tables.map(uri)),
      [ENV.tablePrefixes]: JSON.stringify(this.settings.tablePrefixes.map(uri)),
      // Absent with prefixWideAccess: every table under the prefixes may be changed.
      ...(this.settings.tablePrefixes.length > 0 && !this.settings.prefixWideAccess ? { [ENV.tableRoots]: JSON.stringify(this.settings.tableRoots.map(uri)) } : {}),
    };
  }

  /** The retention settings that are set, as the LAKEWARDEN_* variables settingsFromEnvironment reads (acknowledgements included). */
  private retentionEnvironment(): Record<string, string> {
    const { olderThan, retainVersions, safetyWindow, allowShortRetention, allowShortSafetyWindow } = this.settings.retention;
    return {
      ...(olderThan !== undefined ? { [ENVIRONMENT_KEYS.olderThanMs]: olderThan } : {}),
      ...(retainVersions !== undefined ? { [ENVIRONMENT_KEYS.retainVersions]: String(retainVersions) } : {}),
      ...(safetyWindow !== undefined ? { [ENVIRONMENT_KEYS.safetyWindowMs]: safetyWindow } : {}),
      ...(allowShortRetention === true ? { [ENVIRONMENT_KEYS.allowShortRetention]: "true" } : {}),
      ...(allowShortSafetyWindow === true ? { [ENVIRONMENT_KEYS.allowShortSafetyWindow]: "true" } : {}),
    };
  }

  /**
   * LAKEWARDEN_GLUE_TABLES and LAKEWARDEN_CATALOG_TABLES: the settings' catalog entries keyed by the
   * tables' s3:// URIs, each set only when some table is named (a REST entry names its secret, never its value).
   */
  private catalogEnvironment(): Record<string, string> {
    const uri = (path: string): string => `s3://${this.bucket.bucketName}/${path}`;
    const byUri = (entries: Record<string, unknown>): string => JSON.stringify(Object.fromEntries(Object.entries(entries).map(([root, entry]) => [uri(root), entry])));
    const { glueTables, restCatalogTables } = this.settings;
    return {
      ...(Object.keys(glueTables).length > 0 ? { [ENV.glueTables]: byUri(glueTables) } : {}),
      ...(Object.keys(restCatalogTables).length > 0 ? { [ENV.catalogTables]: byUri(restCatalogTables) } : {}),
    };
  }

  private createFunction(id: string, name: FunctionName, defaults: Partial<NodejsFunctionProps>, overrides: Partial<NodejsFunctionProps> | undefined): NodejsFunction {
    const logGroup = new LogGroup(this, `${id}Logs`, { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    return new NodejsFunction(this, id, {
      code: functionCode(name),
      handler: "index.handler",
      runtime: FUNCTION_RUNTIME,
      architecture: FUNCTION_ARCHITECTURE,
      logGroup,
      description: `lakewarden ${name}`,
      ...defaults,
      ...overrides,
      environment: {
        POWERTOOLS_SERVICE_NAME: "lakewarden",
        POWERTOOLS_METRICS_NAMESPACE: "Lakewarden",
        NODE_OPTIONS: "--enable-source-maps",
        ...defaults.environment,
        ...overrides?.environment,
      },
    });
  }

  private grantAccess(): void {
    const { bucket, settings } = this;
    for (const fn of [this.onCommitFunction, this.cleanupTableFunction]) {
      for (const statement of readTablesStatements(bucket, settings)) fn.addToRolePolicy(statement);
      fn.addToRolePolicy(writeLakewardenStatement(bucket, settings));
    }
    this.cleanupTableFunction.addToRolePolicy(deleteTableObjectsStatement(bucket, settings));
    // on-commit reads commit pointers from Glue; cleanup-table also commits its expiry there (UpdateTable).
    // Both read the REST catalogs' credentials. Each only when some table is named there.
    for (const [fn, commit] of [
      [this.onCommitFunction, false],
      [this.cleanupTableFunction, true],
    ] as const) {
      const glue = glueTablesStatement(this, settings.glueTables, { commit });
      if (glue) fn.addToRolePolicy(glue);
      const secrets = readCatalogSecretsStatement(this, settings.restCatalogTables);
      if (secrets) fn.addToRolePolicy(secrets);
    }
    this.scheduleCleanupFunction.addToRolePolicy(discoverTablesStatement(bucket, settings));
    this.cleanupQueue.grantSendMessages(this.scheduleCleanupFunction);
    // Continuations: cleanup-table sends its table's next run.
    this.cleanupQueue.grantSendMessages(this.cleanupTableFunction);
    // A bucket encrypted with a customer key needs the key too (imported with fromBucketAttributes).
    for (const fn of [this.onCommitFunction, this.cleanupTableFunction]) bucket.encryptionKey?.grantEncryptDecrypt(fn);
    if (bucket.encryptionKey) bucket.encryptionKey.grantDecrypt(this.scheduleCleanupFunction);
  }

  private createAlarms(actions: IAlarmAction[], stoppedForTimeThreshold: number): void {
    const add = (alarm: Alarm): void => {
      for (const action of actions) alarm.addAlarmAction(action);
      this.alarms.push(alarm);
    };
    for (const [id, queue, what] of [
      ["CommitDeadLetterAlarm", this.commitDeadLetterQueue, "commit events"],
      ["CleanupDeadLetterAlarm", this.cleanupDeadLetterQueue, "cleanup requests"],
      ["ScheduleDeadLetterAlarm", this.scheduleDeadLetterQueue, "schedule events"],
    ] as const) {
      add(
        new Alarm(this, id, {
          alarmDescription: `lakewarden: ${what} failed every retry and wait in ${queue.node.id}`,
          metric: queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: "Maximum" }),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    add(
      new Alarm(this, "CommitLagAlarm", {
        alarmDescription: "lakewarden: heads lag commits by more than 5 minutes",
        metric: this.commitQueue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), statistic: "Maximum" }),
        threshold: 300,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 5,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    // The metrics that say work stopped (published by the functions, Powertools EMF, dimension service).
    const lakewardenMetric = (name: string, period: Duration): Metric =>
      new Metric({ namespace: "Lakewarden", metricName: name, dimensionsMap: { service: "lakewarden" }, statistic: "Sum", period });
    for (const [id, name, period, threshold, what] of [
      ["HeadWriteFailuresAlarm", METRIC.headWriteFailures, Duration.minutes(5), 1, "a table's head could not be written"],
      ["ContinuationCapAlarm", METRIC.continuationCapReached, Duration.minutes(5), 1, "a cleanup chain reached its continuation cap; the table waits for the next schedule"],
      [
        "StoppedForTimeAlarm",
        METRIC.cleanupsStoppedForTime,
        Duration.hours(1),
        stoppedForTimeThreshold,
        `${stoppedForTimeThreshold} or more cleanup runs stopped for time in an hour`,
      ],
    ] as const) {
      add(
        new Alarm(this, id, {
          alarmDescription: `lakewarden: ${what}`,
          metric: lakewardenMetric(name, period),
          threshold,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    for (const [id, fn] of [
      ["OnCommitErrorsAlarm", this.onCommitFunction],
      ["ScheduleCleanupErrorsAlarm", this.scheduleCleanupFunction],
      ["CleanupTableErrorsAlarm", this.cleanupTableFunction],
    ] as const) {
      add(
        new Alarm(this, id, {
          alarmDescription: `lakewarden: ${fn.node.id} invocations failed`,
          metric: fn.metricErrors({ period: Duration.minutes(5), statistic: "Sum" }),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }
  }
}
