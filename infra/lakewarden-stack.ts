/**
 * The deployable stack: one Lakewarden construct on a created or imported bucket, an SNS topic
 * every alarm notifies (subscribe people, chat or paging to it; `alarmEmail` subscribes one
 * address), and outputs.
 */
import { CfnOutput, Stack, type StackProps } from "aws-cdk-lib";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import { Bucket } from "aws-cdk-lib/aws-s3";
import { Topic } from "aws-cdk-lib/aws-sns";
import { EmailSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import type { Construct } from "constructs";
import { Lakewarden } from "./lakewarden.ts";
import type { SettingsInput } from "./settings.ts";

export interface LakewardenStackProps extends StackProps {
  settings: SettingsInput;
  /** Import this existing bucket; without it the stack creates one (retained on stack deletion). */
  bucketName?: string;
  /** Subscribe this address to the alarm topic (AWS mails a confirmation link first). */
  alarmEmail?: string;
  /** Send alarms to this existing SNS topic instead of creating one. */
  alarmTopicArn?: string;
}

export class LakewardenStack extends Stack {
  readonly lakewarden: Lakewarden;

  constructor(scope: Construct, id: string, props: LakewardenStackProps) {
    super(scope, id, props);
    const existingBucketObj = props.bucketName ? Bucket.fromBucketName(this, "TableBucket", props.bucketName) : undefined;
    const alarmTopic = props.alarmTopicArn
      ? Topic.fromTopicArn(this, "AlarmTopic", props.alarmTopicArn)
      : new Topic(this, "AlarmTopic", { displayName: "lakewarden alarms", enforceSSL: true });
    if (props.alarmEmail) alarmTopic.addSubscription(new EmailSubscription(props.alarmEmail));
    this.lakewarden = new Lakewarden(this, "Lakewarden", { ...props.settings, existingBucketObj, alarmActions: [new SnsAction(alarmTopic)] });

    new CfnOutput(this, "BucketName", { value: this.lakewarden.bucket.bucketName });
    new CfnOutput(this, "AlarmTopicArn", { value: alarmTopic.topicArn });
    new CfnOutput(this, "CommitQueueUrl", { value: this.lakewarden.commitQueue.queueUrl });
    new CfnOutput(this, "CommitDeadLetterQueueUrl", { value: this.lakewarden.commitDeadLetterQueue.queueUrl });
    new CfnOutput(this, "CleanupQueueUrl", { value: this.lakewarden.cleanupQueue.queueUrl });
    new CfnOutput(this, "CleanupDeadLetterQueueUrl", { value: this.lakewarden.cleanupDeadLetterQueue.queueUrl });
  }
}
