/** The deployable stack: one Lakewarden construct on a created or imported bucket, with outputs. */
import { CfnOutput, Stack, type StackProps } from "aws-cdk-lib";
import { Bucket } from "aws-cdk-lib/aws-s3";
import type { Construct } from "constructs";
import { Lakewarden } from "./lakewarden.ts";
import type { SettingsInput } from "./settings.ts";

export interface LakewardenStackProps extends StackProps {
  settings: SettingsInput;
  /** Import this existing bucket; without it the stack creates one (retained on stack deletion). */
  bucketName?: string;
}

export class LakewardenStack extends Stack {
  readonly lakewarden: Lakewarden;

  constructor(scope: Construct, id: string, props: LakewardenStackProps) {
    super(scope, id, props);
    const existingBucketObj = props.bucketName ? Bucket.fromBucketName(this, "TableBucket", props.bucketName) : undefined;
    this.lakewarden = new Lakewarden(this, "Lakewarden", { ...props.settings, existingBucketObj });

    new CfnOutput(this, "BucketName", { value: this.lakewarden.bucket.bucketName });
    new CfnOutput(this, "CommitQueueUrl", { value: this.lakewarden.commitQueue.queueUrl });
    new CfnOutput(this, "CommitDeadLetterQueueUrl", { value: this.lakewarden.commitDeadLetterQueue.queueUrl });
    new CfnOutput(this, "CleanupQueueUrl", { value: this.lakewarden.cleanupQueue.queueUrl });
    new CfnOutput(this, "CleanupDeadLetterQueueUrl", { value: this.lakewarden.cleanupDeadLetterQueue.queueUrl });
  }
}
