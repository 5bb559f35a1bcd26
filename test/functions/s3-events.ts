/**
 * S3 event notification bodies built from objects that really are in the bucket, for tests that
 * choose the events themselves (keys, order, duplicates, timestamps): what S3 would have sent for
 * each object (S3 User Guide, "Event message structure", version 2.1). on-commit-moto.test.ts
 * takes the notifications moto itself sends.
 */
import { ListObjectsV2Command, type S3Client } from "@aws-sdk/client-s3";
import { encodeS3EventKey } from "../../functions/shared/s3-event.ts";

export interface ObjectCreated {
  bucket: string;
  key: string;
  size: number;
  eTag: string;
  lastModified: Date;
}

let sequence = 0;

export function s3EventBody(objects: readonly ObjectCreated[], region = "us-east-1"): string {
  return JSON.stringify({
    Records: objects.map((object) => ({
      eventVersion: "2.1",
      eventSource: "aws:s3",
      awsRegion: region,
      eventTime: object.lastModified.toISOString(),
      eventName: "ObjectCreated:Put",
      userIdentity: { principalId: "AWS:AIDAEXAMPLE" },
      requestParameters: { sourceIPAddress: "203.0.113.7" },
      responseElements: { "x-amz-request-id": "C3D13FE58DE4C810", "x-amz-id-2": "FMyUVURIY8/IgAtTv8xRjskZQpcIZ9KG4V5Wp6S7S/JRWeUWerMUE5JgHvANOjpD" },
      s3: {
        s3SchemaVersion: "1.0",
        configurationId: "lakewarden-commits",
        bucket: { name: object.bucket, ownerIdentity: { principalId: "A3NL1KOZZKExample" }, arn: `arn:aws:s3:::${object.bucket}` },
        object: {
          key: encodeS3EventKey(object.key),
          size: object.size,
          eTag: object.eTag.replace(/"/g, ""),
          sequencer: (++sequence).toString(16).toUpperCase().padStart(18, "0"),
        },
      },
    })),
  });
}

export const S3_TEST_EVENT_BODY = (bucket: string): string =>
  JSON.stringify({
    Service: "Amazon S3",
    Event: "s3:TestEvent",
    Time: new Date().toISOString(),
    Bucket: bucket,
    RequestId: "5582815E1AEA5ADF",
    HostId: "8cLeGAmw098X5cv4Zkwcmo8vvZa3eH3eKxsPzbB9wrR+YstdA6Knx4Ip8EXAMPLE",
  });

/** Every object under `prefix` as it is stored, ascending by key. */
export async function listObjects(s3: S3Client, bucket: string, prefix: string): Promise<ObjectCreated[]> {
  const objects: ObjectCreated[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const item of page.Contents ?? []) {
      objects.push({ bucket, key: item.Key ?? "", size: item.Size ?? 0, eTag: item.ETag ?? "", lastModified: item.LastModified ?? new Date() });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return objects;
}
