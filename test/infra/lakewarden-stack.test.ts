/** CDK assertion tests of the stack the app synthesizes (bundling skipped; see bundling.test.ts). */
import { Match } from "aws-cdk-lib/assertions";
import { describe, expect, it } from "vitest";
import { InvalidSettingError } from "../../infra/settings.ts";
import { asList, policyStatements, render, synthStack } from "./cdk-app.ts";

const settings = { tables: ["lake/orders.lance"], tablePrefixes: ["warehouse/"], tableRoots: ["warehouse/sales.lance", "warehouse/eu/users.delta"] };

describe("LakewardenStack on a bucket it creates", () => {
  const { template } = synthStack({ settings });
  const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>;
  const logicalId = (type: string, fragment: string): string => {
    const ids = Object.keys(resources).filter((id) => resources[id]!.Type === type && id.includes(fragment));
    expect(ids, `${type} *${fragment}*`).toHaveLength(1);
    return ids[0]!;
  };
  const ourFunctions = Object.entries(
    template.findResources("AWS::Lambda::Function", {
      Properties: { Description: Match.stringLikeRegexp("^lakewarden ") },
    }),
  );

  it("creates an encrypted, TLS-only, private bucket that survives the stack", () => {
    template.resourceCountIs("AWS::S3::Bucket", 1);
    template.hasResource("AWS::S3::Bucket", {
      DeletionPolicy: "Retain",
      Properties: Match.objectLike({
        BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } }] },
        PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      }),
    });
    template.hasResourceProperties("AWS::S3::BucketPolicy", {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } })]) },
    });
  });

  it("has commit and cleanup queues, each with its own dead-letter queue, SSE-SQS and TLS only", () => {
    template.resourceCountIs("AWS::SQS::Queue", 5);
    const commitDlq = logicalId("AWS::SQS::Queue", "CommitDeadLetterQueue");
    const cleanupDlq = logicalId("AWS::SQS::Queue", "CleanupDeadLetterQueue");
    template.hasResourceProperties("AWS::SQS::Queue", {
      RedrivePolicy: { deadLetterTargetArn: { "Fn::GetAtt": [commitDlq, "Arn"] }, maxReceiveCount: 5 },
      VisibilityTimeout: 360, // six times on-commit's 60 s timeout
      SqsManagedSseEnabled: true,
    });
    template.hasResourceProperties("AWS::SQS::Queue", {
      RedrivePolicy: { deadLetterTargetArn: { "Fn::GetAtt": [cleanupDlq, "Arn"] }, maxReceiveCount: 3 },
      VisibilityTimeout: 5400, // six times cleanup-table's 15 min timeout
      SqsManagedSseEnabled: true,
    });
    for (const dlq of [commitDlq, cleanupDlq]) {
      expect(resources[dlq]!.Properties).toMatchObject({ MessageRetentionPeriod: 1209600, SqsManagedSseEnabled: true });
    }
    const tlsOnly = Object.values(template.findResources("AWS::SQS::QueuePolicy")).filter((policy) => JSON.stringify(policy).includes('"aws:SecureTransport":"false"'));
    expect(tlsOnly.length).toBe(5);
  });

  it("the cleanup queue is FIFO (the table is the message group), its DLQ too; cleanup-table may send continuations to it", () => {
    const cleanupQueue = logicalId("AWS::SQS::Queue", "CleanupQueue");
    const cleanupDlq = logicalId("AWS::SQS::Queue", "CleanupDeadLetterQueue");
    expect(resources[cleanupQueue]!.Properties).toMatchObject({ FifoQueue: true });
    expect(resources[cleanupDlq]!.Properties).toMatchObject({ FifoQueue: true });
    expect(resources[logicalId("AWS::SQS::Queue", "CommitQueue")]!.Properties).not.toHaveProperty("FifoQueue");
    const env = (resources[logicalId("AWS::Lambda::Function", "CleanupTable")]!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(render(env.LAKEWARDEN_CLEANUP_QUEUE_URL)).toBe(`<${cleanupQueue}>`);
    expect(env.LAKEWARDEN_MAX_CONTINUATIONS).toBe("20");
    const cleanupRole = JSON.stringify(Object.values(template.findResources("AWS::IAM::Policy")).filter((p) => JSON.stringify(p).includes("CleanupTable")));
    expect(cleanupRole).toContain("sqs:SendMessage");
    expect(cleanupRole).toContain(cleanupQueue);
  });

  it("gives the schedule target a dead-letter queue, alarmed", () => {
    const dlq = logicalId("AWS::SQS::Queue", "ScheduleTargetDeadLetterQueue");
    template.hasResourceProperties("AWS::Events::Rule", {
      Targets: [Match.objectLike({ DeadLetterConfig: { Arn: { "Fn::GetAtt": [dlq, "Arn"] } } })],
    });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "ApproximateNumberOfMessagesVisible",
      Dimensions: [{ Name: "QueueName", Value: { "Fn::GetAtt": [dlq, "QueueName"] } }],
    });
  });

  it("alarms on the metrics that say work stopped: runs stopped for time, head write failures, continuation cap reached", () => {
    for (const [name, threshold, period] of [
      ["CleanupsStoppedForTime", 12, 3600],
      ["HeadWriteFailures", 1, 300],
      ["ContinuationCapReached", 1, 300],
    ] as const) {
      template.hasResourceProperties("AWS::CloudWatch::Alarm", {
        Namespace: "Lakewarden",
        MetricName: name,
        Dimensions: [{ Name: "service", Value: "lakewarden" }],
        Statistic: "Sum",
        Period: period,
        Threshold: threshold,
        ComparisonOperator: "GreaterThanOrEqualToThreshold",
      });
    }
  });

  it("alarms on messages in either dead-letter queue, on commit lag and on function errors", () => {
    template.resourceCountIs("AWS::CloudWatch::Alarm", 10);
    for (const dlq of ["CommitDeadLetterQueue", "CleanupDeadLetterQueue"]) {
      template.hasResourceProperties("AWS::CloudWatch::Alarm", {
        MetricName: "ApproximateNumberOfMessagesVisible",
        Namespace: "AWS/SQS",
        Dimensions: [{ Name: "QueueName", Value: { "Fn::GetAtt": [logicalId("AWS::SQS::Queue", dlq), "QueueName"] } }],
        Threshold: 1,
        ComparisonOperator: "GreaterThanOrEqualToThreshold",
      });
    }
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "ApproximateAgeOfOldestMessage",
      Dimensions: [{ Name: "QueueName", Value: { "Fn::GetAtt": [logicalId("AWS::SQS::Queue", "CommitQueue"), "QueueName"] } }],
    });
    for (const [id] of ourFunctions) {
      template.hasResourceProperties("AWS::CloudWatch::Alarm", { MetricName: "Errors", Dimensions: [{ Name: "FunctionName", Value: { Ref: id } }] });
    }
  });

  it("every alarm notifies the stack's alarm topic; lakewarden:alarmEmail subscribes an address to it", () => {
    const topic = logicalId("AWS::SNS::Topic", "AlarmTopic");
    const alarms = Object.values(template.findResources("AWS::CloudWatch::Alarm")) as { Properties: { AlarmActions?: unknown[] } }[];
    expect(alarms).toHaveLength(10);
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topic }]);
    template.hasOutput("AlarmTopicArn", { Value: { Ref: topic } });
    template.resourceCountIs("AWS::SNS::Subscription", 0);

    const withEmail = synthStack({ settings, alarmEmail: "oncall@example.com" }).template;
    withEmail.hasResourceProperties("AWS::SNS::Subscription", { Protocol: "email", Endpoint: "oncall@example.com" });
  });

  it("sends only version-file creations under the configured tables to the commit queue", () => {
    const commitQueue = logicalId("AWS::SQS::Queue", "CommitQueue");
    template.hasResourceProperties("Custom::S3BucketNotifications", {
      NotificationConfiguration: {
        // Per table root, one filter per registered format's commit folder; under a shared
        // prefix, suffixes that end one another fold into the shorter (.metadata.json into .json).
        QueueConfigurations: [
          {
            Events: ["s3:ObjectCreated:*"],
            QueueArn: { "Fn::GetAtt": [commitQueue, "Arn"] },
            Filter: {
              Key: {
                FilterRules: [
                  { Name: "suffix", Value: ".manifest" },
                  { Name: "prefix", Value: "lake/orders.lance/_versions/" },
                ],
              },
            },
          },
          {
            Events: ["s3:ObjectCreated:*"],
            QueueArn: { "Fn::GetAtt": [commitQueue, "Arn"] },
            Filter: {
              Key: {
                FilterRules: [
                  { Name: "suffix", Value: ".metadata.json" },
                  { Name: "prefix", Value: "lake/orders.lance/metadata/" },
                ],
              },
            },
          },
          {
            Events: ["s3:ObjectCreated:*"],
            QueueArn: { "Fn::GetAtt": [commitQueue, "Arn"] },
            Filter: {
              Key: {
                FilterRules: [
                  { Name: "suffix", Value: ".json" },
                  { Name: "prefix", Value: "lake/orders.lance/_delta_log/" },
                ],
              },
            },
          },
          {
            Events: ["s3:ObjectCreated:*"],
            QueueArn: { "Fn::GetAtt": [commitQueue, "Arn"] },
            Filter: {
              Key: {
                FilterRules: [
                  { Name: "suffix", Value: ".manifest" },
                  { Name: "prefix", Value: "warehouse/" },
                ],
              },
            },
          },
          {
            Events: ["s3:ObjectCreated:*"],
            QueueArn: { "Fn::GetAtt": [commitQueue, "Arn"] },
            Filter: {
              Key: {
                FilterRules: [
                  { Name: "suffix", Value: ".json" },
                  { Name: "prefix", Value: "warehouse/" },
                ],
              },
            },
          },
        ],
      },
    });
  });

  it("runs the cleanup schedule against schedule-cleanup", () => {
    template.hasResourceProperties("AWS::Events::Rule", {
      ScheduleExpression: "rate(1 day)",
      State: "ENABLED",
      Targets: [Match.objectLike({ Arn: { "Fn::GetAtt": [logicalId("AWS::Lambda::Function", "ScheduleCleanup"), "Arn"] }, RetryPolicy: { MaximumRetryAttempts: 2 } })],
    });
  });

  it("runs three functions on Node.js 22, ARM64, from ESM bundles, with their settings", () => {
    expect(ourFunctions).toHaveLength(3);
    for (const [, fn] of ourFunctions) {
      expect(fn.Properties).toMatchObject({ Runtime: "nodejs22.x", Architectures: ["arm64"], Handler: "index.handler" });
    }
    const env = (fragment: string): Record<string, unknown> =>
      (resources[logicalId("AWS::Lambda::Function", fragment)]!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    const bucket = logicalId("AWS::S3::Bucket", "TableBucket");
    expect(render(env("OnCommit").LAKEWARDEN_TABLES)).toBe(`["s3://<${bucket}>/lake/orders.lance"]`);
    expect(render(env("OnCommit").LAKEWARDEN_TABLE_PREFIXES)).toBe(`["s3://<${bucket}>/warehouse/"]`);
    // The handlers change only the table roots IAM names.
    for (const fn of ["OnCommit", "CleanupTable", "ScheduleCleanup"]) {
      expect(render(env(fn).LAKEWARDEN_TABLE_ROOTS)).toBe(`["s3://<${bucket}>/warehouse/sales.lance","s3://<${bucket}>/warehouse/eu/users.delta"]`);
    }
    expect(env("OnCommit")).not.toHaveProperty("LAKEWARDEN_HEAD_CODEC"); // each table's own config decides
    expect(env("CleanupTable")).not.toHaveProperty("LAKEWARDEN_SAFETY_WINDOW");
    // Not set unless given: lakewarden's defaults apply, and an Iceberg table's own snapshot retention.
    expect(env("CleanupTable")).not.toHaveProperty("LAKEWARDEN_OLDER_THAN");
    expect(env("CleanupTable")).not.toHaveProperty("LAKEWARDEN_RETAIN_VERSIONS");
    expect(render(env("ScheduleCleanup").LAKEWARDEN_CLEANUP_QUEUE_URL)).toBe(`<${logicalId("AWS::SQS::Queue", "CleanupQueue")}>`);
  });

  it("reports partial batch failures from both queue consumers", () => {
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      FunctionName: { Ref: logicalId("AWS::Lambda::Function", "OnCommit") },
      EventSourceArn: { "Fn::GetAtt": [logicalId("AWS::SQS::Queue", "CommitQueue"), "Arn"] },
      BatchSize: 10,
      FunctionResponseTypes: ["ReportBatchItemFailures"],
    });
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      FunctionName: { Ref: logicalId("AWS::Lambda::Function", "CleanupTable") },
      EventSourceArn: { "Fn::GetAtt": [logicalId("AWS::SQS::Queue", "CleanupQueue"), "Arn"] },
      BatchSize: 1,
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      ScalingConfig: { MaximumConcurrency: 5 },
    });
  });

  it("grants least privilege: no s3:*, deletes only under <root>/ of the configured tables, writes only under <root>/_lakewarden/", () => {
    const bucket = `<${logicalId("AWS::S3::Bucket", "TableBucket")}.Arn>`;
    const roots = ["lake/orders.lance", "warehouse/sales.lance", "warehouse/eu/users.delta"];
    const readScopes = [`${bucket}/lake/orders.lance/`, `${bucket}/warehouse/`];
    const statements = policyStatements(template);
    expect(statements.length).toBeGreaterThan(0);
    for (const { policy, statement } of statements) {
      const actions = asList(statement.Action);
      const resourcesText = asList(statement.Resource as unknown).map(render);
      const where = `${policy}: ${JSON.stringify(statement)}`;
      expect(actions, where).not.toContain("*");
      expect(
        actions.filter((a) => /^s3:\*|^s3:[A-Za-z]*\*$/.test(a)),
        where,
      ).toEqual([]);
      if (actions.some((a) => a.startsWith("s3:Delete"))) {
        // Exactly one resource per table root, nothing wider: no bucket, no prefix.
        expect(resourcesText.sort(), where).toEqual(roots.map((root) => `${bucket}/${root}/*`).sort());
      }
      if (actions.includes("s3:PutObject")) {
        expect(resourcesText.sort(), where).toEqual(roots.map((root) => `${bucket}/${root}/_lakewarden/*`).sort());
      }
      if (actions.includes("s3:ListBucket")) {
        expect(statement.Condition?.StringLike?.["s3:prefix"], where).toEqual(["lake/orders.lance/*", "warehouse/*"]);
      }
      if (actions.includes("s3:GetObject")) {
        for (const resource of resourcesText)
          expect(
            readScopes.some((scope) => resource.startsWith(scope)),
            `${where} → ${resource}`,
          ).toBe(true);
      }
    }
    // No Glue table named: no Glue permission at all, and no Glue setting in the environment.
    expect(statements.filter(({ statement }) => asList(statement.Action).some((a) => a.startsWith("glue:")))).toEqual([]);
    for (const [, fn] of ourFunctions) {
      expect((fn.Properties as { Environment: { Variables: object } }).Environment.Variables).not.toHaveProperty("LAKEWARDEN_GLUE_TABLES");
      expect((fn.Properties as { Environment: { Variables: object } }).Environment.Variables).not.toHaveProperty("LAKEWARDEN_MIN_WORK_PER_RUN");
    }
    // Only cleanup-table may delete, and it can.
    const deleters = statements.filter(({ statement }) => asList(statement.Action).includes("s3:DeleteObject"));
    expect(new Set(deleters.map((d) => d.policy)).size).toBe(1);
    expect(deleters[0]!.policy).toContain("CleanupTable");
  });
});

describe("LakewardenStack with Glue-owned Iceberg tables", () => {
  const { template } = synthStack({
    settings: {
      tables: ["lake/orders"],
      tablePrefixes: ["warehouse/"],
      tableRoots: ["warehouse/events", "warehouse/users"],
      glueTables: { "lake/orders": "sales.orders", "warehouse/events": { database: "shared", table: "events", catalogId: "210987654321" } },
      minWorkPerRun: 250,
    },
  });
  const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>;
  const functionId = (fragment: string) => Object.keys(resources).find((id) => resources[id]!.Type === "AWS::Lambda::Function" && id.includes(fragment))!;

  it("grants on-commit glue:GetTable and cleanup-table glue:GetTable and glue:UpdateTable on exactly the named catalogs, databases and tables, and schedule-cleanup nothing in Glue", () => {
    const glue = policyStatements(template).filter(({ statement }) => asList(statement.Action).some((a) => a.startsWith("glue")));
    const byFunction = new Map(glue.map(({ policy, statement }) => [["CleanupTable", "OnCommit"].find((fn) => policy.includes(fn)), statement]));
    expect(glue).toHaveLength(2);
    expect([...byFunction.keys()].sort()).toEqual(["CleanupTable", "OnCommit"]);
    expect(asList(byFunction.get("OnCommit")!.Action)).toEqual(["glue:GetTable"]);
    expect(asList(byFunction.get("CleanupTable")!.Action)).toEqual(["glue:GetTable", "glue:UpdateTable"]);
    for (const { statement } of glue) {
      expect(statement.Effect).toBe("Allow");
      expect(
        asList(statement.Resource as unknown)
          .map(render)
          .sort(),
      ).toEqual([
        "arn:<AWS::Partition>:glue:<AWS::Region>:210987654321:catalog",
        "arn:<AWS::Partition>:glue:<AWS::Region>:210987654321:database/shared",
        "arn:<AWS::Partition>:glue:<AWS::Region>:210987654321:table/shared/events",
        "arn:<AWS::Partition>:glue:<AWS::Region>:<AWS::AccountId>:catalog",
        "arn:<AWS::Partition>:glue:<AWS::Region>:<AWS::AccountId>:database/sales",
        "arn:<AWS::Partition>:glue:<AWS::Region>:<AWS::AccountId>:table/sales/orders",
      ]);
      expect(statement.Condition).toBeUndefined();
    }
    // No REST catalog table named: no secret may be read.
    expect(policyStatements(template).filter(({ statement }) => asList(statement.Action).some((a) => a.startsWith("secretsmanager:")))).toEqual([]);
  });

  it("tells cleanup-table and on-commit (not schedule-cleanup) which tables Glue owns, by s3:// URI; cleanup-table its minimum work per run", () => {
    const variables = (fragment: string) => (resources[functionId(fragment)]!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    const bucket = Object.keys(resources).find((id) => resources[id]!.Type === "AWS::S3::Bucket")!;
    for (const fn of ["CleanupTable", "OnCommit"]) {
      expect(JSON.parse(render(variables(fn).LAKEWARDEN_GLUE_TABLES)), fn).toEqual({
        [`s3://<${bucket}>/lake/orders`]: { database: "sales", table: "orders" },
        [`s3://<${bucket}>/warehouse/events`]: { database: "shared", table: "events", catalogId: "210987654321" },
      });
    }
    expect(variables("CleanupTable").LAKEWARDEN_MIN_WORK_PER_RUN).toBe("250");
    expect(variables("ScheduleCleanup")).not.toHaveProperty("LAKEWARDEN_GLUE_TABLES");
    for (const other of ["OnCommit", "ScheduleCleanup"]) expect(variables(other)).not.toHaveProperty("LAKEWARDEN_MIN_WORK_PER_RUN");
  });

  it("refuses a Glue table lakewarden may not change before anything is synthesized", () => {
    expect(() => synthStack({ settings: { tables: ["lake/orders"], glueTables: { "lake/users": "crm.users" } } })).toThrow(
      /setting glueTables: "lake\/users" is not a table lakewarden may change/,
    );
  });
});

describe("LakewardenStack with Iceberg REST catalog tables", () => {
  const SECRET_ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:lakewarden/polaris-AbCdEf";
  const { template } = synthStack({
    settings: {
      tables: ["lake/orders"],
      tablePrefixes: ["warehouse/"],
      tableRoots: ["warehouse/events", "warehouse/users"],
      glueTables: { "warehouse/users": "crm.users" },
      restCatalogTables: {
        "lake/orders": { uri: "https://polaris.example.com/api/catalog/", warehouse: "lake", table: "sales.orders", credentialsSecret: SECRET_ARN },
        "warehouse/events": { uri: "https://nessie.example.com/iceberg", table: "analytics.web.events", credentialsSecret: "lakewarden/nessie" },
      },
    },
  });
  const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>;
  const functionId = (fragment: string) => Object.keys(resources).find((id) => resources[id]!.Type === "AWS::Lambda::Function" && id.includes(fragment))!;
  const variables = (fragment: string) => (resources[functionId(fragment)]!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;

  it("grants cleanup-table and on-commit secretsmanager:GetSecretValue on exactly the named secrets (a name as name-??????), and schedule-cleanup none", () => {
    const secrets = policyStatements(template).filter(({ statement }) => asList(statement.Action).some((a) => a.startsWith("secretsmanager:")));
    expect(secrets.map(({ policy }) => ["CleanupTable", "OnCommit", "ScheduleCleanup"].find((fn) => policy.includes(fn))).sort()).toEqual(["CleanupTable", "OnCommit"]);
    for (const { statement } of secrets) {
      expect(statement.Effect).toBe("Allow");
      expect(asList(statement.Action)).toEqual(["secretsmanager:GetSecretValue"]);
      expect(
        asList(statement.Resource as unknown)
          .map(render)
          .sort(),
      ).toEqual(["arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:lakewarden/nessie-??????", SECRET_ARN]);
      expect(statement.Condition).toBeUndefined();
    }
    // No statement anywhere names a wildcard secret or Secrets Manager as a whole.
    for (const { statement } of policyStatements(template)) {
      for (const action of asList(statement.Action)) expect(action).not.toMatch(/^secretsmanager:\*|^\*$/);
      if (asList(statement.Action).some((a) => a.startsWith("secretsmanager:"))) {
        for (const resource of asList(statement.Resource as unknown).map(render)) expect(resource).not.toMatch(/secret:\*|\*$/);
      }
    }
    // Glue keeps its own grant for the Glue table alone.
    const glue = policyStatements(template).filter(({ statement }) => asList(statement.Action).some((a) => a.startsWith("glue:")));
    for (const { statement } of glue)
      expect(asList(statement.Resource as unknown).map(render)).toContain("arn:<AWS::Partition>:glue:<AWS::Region>:<AWS::AccountId>:table/crm/users");
  });

  it("tells cleanup-table and on-commit each REST table's catalog, namespace, table and secret by s3:// URI: the secret's id, never a credential", () => {
    const bucket = Object.keys(resources).find((id) => resources[id]!.Type === "AWS::S3::Bucket")!;
    for (const fn of ["CleanupTable", "OnCommit"]) {
      expect(JSON.parse(render(variables(fn).LAKEWARDEN_CATALOG_TABLES)), fn).toEqual({
        [`s3://<${bucket}>/lake/orders`]: {
          uri: "https://polaris.example.com/api/catalog",
          warehouse: "lake",
          namespace: ["sales"],
          table: "orders",
          credentialsSecret: SECRET_ARN,
        },
        [`s3://<${bucket}>/warehouse/events`]: {
          uri: "https://nessie.example.com/iceberg",
          namespace: ["analytics", "web"],
          table: "events",
          credentialsSecret: "lakewarden/nessie",
        },
      });
      expect(JSON.parse(render(variables(fn).LAKEWARDEN_GLUE_TABLES)), fn).toEqual({ [`s3://<${bucket}>/warehouse/users`]: { database: "crm", table: "users" } });
      expect(
        Object.keys(variables(fn)).filter((name) => /SECRET|TOKEN|CLIENT/.test(name)),
        fn,
      ).toEqual([]);
    }
    expect(variables("ScheduleCleanup")).not.toHaveProperty("LAKEWARDEN_CATALOG_TABLES");
  });

  it("a REST table without a secret is asked without credentials and grants no secret", () => {
    const { template: open } = synthStack({
      settings: { tables: ["lake/orders"], restCatalogTables: { "lake/orders": { uri: "https://catalog.internal", table: "sales.orders" } } },
    });
    expect(policyStatements(open).filter(({ statement }) => asList(statement.Action).some((a) => a.startsWith("secretsmanager:")))).toEqual([]);
  });
});

describe("LakewardenStack with prefixWideAccess", () => {
  const { template } = synthStack({ settings: { tables: ["lake/orders.lance"], tablePrefixes: ["warehouse/"], prefixWideAccess: true } });
  const bucket = `<${Object.keys(template.findResources("AWS::S3::Bucket"))[0]}.Arn>`;
  const resourcesOf = (action: string): string[] =>
    policyStatements(template)
      .filter(({ statement }) => asList(statement.Action).includes(action))
      .flatMap(({ statement }) => asList(statement.Resource as unknown).map(render));

  it("widens writes and deletes to the prefix, and only then; still never the whole bucket", () => {
    expect([...new Set(resourcesOf("s3:DeleteObject"))].sort()).toEqual([`${bucket}/lake/orders.lance/*`, `${bucket}/warehouse/*`]);
    expect([...new Set(resourcesOf("s3:PutObject"))].sort()).toEqual([`${bucket}/lake/orders.lance/_lakewarden/*`, `${bucket}/warehouse/*/_lakewarden/*`]);
    const cleanup = Object.values(template.findResources("AWS::Lambda::Function", { Properties: { Description: "lakewarden cleanup-table" } }));
    expect(cleanup).toHaveLength(1);
    expect((cleanup[0] as { Properties: { Environment: { Variables: Record<string, unknown> } } }).Properties.Environment.Variables).not.toHaveProperty("LAKEWARDEN_TABLE_ROOTS");
  });
});

describe("LakewardenStack on an existing bucket", () => {
  const { template } = synthStack({ settings, bucketName: "existing-lake" });

  it("imports the bucket instead of creating one and still wires its notifications", () => {
    template.resourceCountIs("AWS::S3::Bucket", 0);
    template.hasResourceProperties("Custom::S3BucketNotifications", { BucketName: "existing-lake" });
    const deletes = policyStatements(template).filter(({ statement }) => asList(statement.Action).includes("s3:DeleteObject"));
    expect(deletes.flatMap(({ statement }) => asList(statement.Resource as unknown).map(render)).sort()).toEqual([
      "arn:<AWS::Partition>:s3:::existing-lake/lake/orders.lance/*",
      "arn:<AWS::Partition>:s3:::existing-lake/warehouse/eu/users.delta/*",
      "arn:<AWS::Partition>:s3:::existing-lake/warehouse/sales.lance/*",
    ]);
  });
});

describe("LakewardenStack with an existing alarm topic", () => {
  const topicArn = "arn:aws:sns:eu-west-1:123456789012:oncall";
  const { template } = synthStack({ settings, alarmTopicArn: topicArn });

  it("sends every alarm to that topic and creates none", () => {
    template.resourceCountIs("AWS::SNS::Topic", 0);
    const alarms = Object.values(template.findResources("AWS::CloudWatch::Alarm")) as { Properties: { AlarmActions?: unknown[] } }[];
    expect(alarms.length).toBe(10);
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toEqual([topicArn]);
  });
});

describe("LakewardenStack settings", () => {
  it("refuses overlapping scopes and a whole-bucket prefix before anything is synthesized", () => {
    expect(() => synthStack({ settings: { tables: ["warehouse/t.lance"], tablePrefixes: ["warehouse/"] } })).toThrow(InvalidSettingError);
    expect(() => synthStack({ settings: { tablePrefixes: [""] } })).toThrow(/the whole bucket cannot be a table prefix/);
  });

  it("refuses a prefix whose writable tables are unknown unless prefixWideAccess is set", () => {
    expect(() => synthStack({ settings: { tablePrefixes: ["lake/"] } })).toThrow(/setting tableRoots: name the tables under lake\/ that lakewarden may change/);
    expect(() => synthStack({ settings: { tablePrefixes: ["lake/"], tableRoots: ["other/t.lance"] } })).toThrow(/"other\/t.lance" is under none of the tablePrefixes/);
  });

  it("takes the schedule and head settings given", () => {
    const { template } = synthStack({ settings: { ...settings, cleanupSchedule: "cron(0 3 * * ? *)", head: { codec: "json", inlineBytes: 4096 } } });
    template.hasResourceProperties("AWS::Events::Rule", { ScheduleExpression: "cron(0 3 * * ? *)" });
    template.hasResourceProperties("AWS::Lambda::Function", {
      Description: "lakewarden on-commit",
      Environment: { Variables: Match.objectLike({ LAKEWARDEN_HEAD_CODEC: "json", LAKEWARDEN_HEAD_INLINE_BYTES: "4096" }) },
    });
  });

  it("gives cleanup-table a full vCPU and 2 GiB of /tmp for the pages its runs spill", () => {
    const { template } = synthStack({ settings });
    template.hasResourceProperties("AWS::Lambda::Function", { Description: "lakewarden cleanup-table", MemorySize: 1769, EphemeralStorage: { Size: 2048 } });
  });

  it("passes the retention given to cleanup-table", () => {
    const { template } = synthStack({ settings: { ...settings, retention: { olderThan: "10d", retainVersions: 2 } } });
    template.hasResourceProperties("AWS::Lambda::Function", {
      Description: "lakewarden cleanup-table",
      Environment: { Variables: Match.objectLike({ LAKEWARDEN_OLDER_THAN: "10d", LAKEWARDEN_RETAIN_VERSIONS: "2" }) },
    });
  });

  it("passes a short retention's acknowledgement with it, so the function's own guard accepts it", () => {
    const retention = { olderThan: "1h", safetyWindow: "30m", allowShortRetention: true, allowShortSafetyWindow: true };
    const { template } = synthStack({ settings: { ...settings, retention } });
    template.hasResourceProperties("AWS::Lambda::Function", {
      Description: "lakewarden cleanup-table",
      Environment: {
        Variables: Match.objectLike({
          LAKEWARDEN_OLDER_THAN: "1h",
          LAKEWARDEN_SAFETY_WINDOW: "30m",
          LAKEWARDEN_ALLOW_SHORT_RETENTION: "true",
          LAKEWARDEN_ALLOW_SHORT_SAFETY_WINDOW: "true",
        }),
      },
    });
  });
});

describe("synthesizing in tests", () => {
  it("leaves nothing in the temp dir (no cdk.out* folders)", async () => {
    const { mkdtemp, readdir, rm } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const emptyTemp = await mkdtemp(join(tmpdir(), "lw-synth-temp-"));
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = emptyTemp; // os.tmpdir() reads it on every call, CDK's own temp folders included
    try {
      synthStack({ settings: { tablePrefixes: ["lake/"], tableRoots: ["lake/t.lance"] } });
      expect(await readdir(emptyTemp)).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
      await rm(emptyTemp, { recursive: true, force: true });
    }
  });
});
