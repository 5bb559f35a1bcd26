import { describe, expect, it } from "vitest";
import { decodeS3EventKey, encodeS3EventKey, MalformedEventError, parseS3Notification } from "../../functions/shared/s3-event.ts";

/** One record exactly as S3 writes it (S3 User Guide, "Event message structure", version 2.1). */
function s3Record(key: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    eventVersion: "2.1",
    eventSource: "aws:s3",
    awsRegion: "us-east-1",
    eventTime: "2026-03-01T12:00:00.123Z",
    eventName: "ObjectCreated:Put",
    userIdentity: { principalId: "AWS:AIDAEXAMPLE" },
    requestParameters: { sourceIPAddress: "203.0.113.7" },
    responseElements: { "x-amz-request-id": "C3D13FE58DE4C810", "x-amz-id-2": "FMyUVURIY8/IgAtTv8xRjskZQpcIZ9KG4V5Wp6S7S/JRWeUWerMUE5JgHvANOjpD" },
    s3: {
      s3SchemaVersion: "1.0",
      configurationId: "lakewarden-commits",
      bucket: { name: "lake-bucket", ownerIdentity: { principalId: "A3NL1KOZZKExample" }, arn: "arn:aws:s3:::lake-bucket" },
      object: { key, size: 1024, eTag: "d41d8cd98f00b204e9800998ecf8427e", sequencer: "0055AED6DCD90281E5" },
    },
    ...overrides,
  };
}

describe("parseS3Notification", () => {
  it("reads object-created records and decodes their keys", () => {
    const body = JSON.stringify({ Records: [s3Record("my+lake/caf%C3%A9+%E2%98%95.lance/_versions/2.manifest")] });
    const parsed = parseS3Notification(body, "SQS message m1");
    expect(parsed).toEqual({
      kind: "objects",
      objects: [
        {
          eventName: "ObjectCreated:Put",
          bucket: "lake-bucket",
          key: "my lake/café ☕.lance/_versions/2.manifest",
          eventTime: new Date("2026-03-01T12:00:00.123Z"),
          size: 1024,
          sequencer: "0055AED6DCD90281E5",
        },
      ],
    });
  });

  it("recognizes the s3:TestEvent S3 sends when notifications are configured", () => {
    const body = JSON.stringify({
      Service: "Amazon S3",
      Event: "s3:TestEvent",
      Time: "2026-03-01T12:00:00.000Z",
      Bucket: "lake-bucket",
      RequestId: "5582815E1AEA5ADF",
      HostId: "8cLeGAmw098X5cv4Zkwcmo8vvZa3eH3eKxsPzbB9wrR+YstdA6Knx4Ip8EXAMPLE",
    });
    expect(parseS3Notification(body, "m")).toEqual({ kind: "test", bucket: "lake-bucket" });
  });

  it("names the message and the problem for bodies it cannot read", () => {
    const cases: [string, RegExp][] = [
      ["not json", /^SQS message m9: body is not JSON/],
      ["[1,2]", /body is not an S3 event/],
      ['{"hello":1}', /body has no Records array/],
      [JSON.stringify({ Records: [{ eventName: "ObjectCreated:Put" }] }), /record 0 is not an S3 event record/],
      [JSON.stringify({ Records: [s3Record("")] }), /record 0 has no s3.object.key/],
      [JSON.stringify({ Records: [s3Record("a%ZZ")] }), /record 0 object key "a%ZZ" is not valid URL encoding/],
      [JSON.stringify({ Records: [s3Record("k", { eventTime: "yesterday" })] }), /unreadable eventTime/],
    ];
    for (const [body, message] of cases) {
      expect(() => parseS3Notification(body, "SQS message m9"), body).toThrow(MalformedEventError);
      expect(() => parseS3Notification(body, "SQS message m9"), body).toThrow(message);
    }
  });
});

describe("S3 event key encoding", () => {
  it("round-trips spaces, plus signs, unicode and partition-style characters", () => {
    for (const key of ["a b/c+d.lance/_versions/1.manifest", "lake/ventes été ☕/dt=2026-01-01/t.lance", "x/%41/y"]) {
      const encoded = encodeS3EventKey(key);
      expect(encoded).not.toContain(" ");
      expect(decodeS3EventKey(encoded, "test")).toBe(key);
    }
    expect(encodeS3EventKey("a b+c")).toBe("a+b%2Bc");
  });
});
