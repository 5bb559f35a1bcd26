/** Names an S3 REST request by the kind lakewarden's stores count (RequestKind). */
import type { RequestKind } from "../../lib/store/object-store.ts";

export type ProxyCounts = Record<RequestKind, number>;

export function emptyCounts(): ProxyCounts {
  return { get: 0, head: 0, list: 0, put: 0, delete: 0 };
}

export function classifyS3Request(method: string, url: string): RequestKind {
  const parsed = new URL(url, "http://proxy");
  const query = parsed.searchParams;
  switch (method.toUpperCase()) {
    case "HEAD":
      return "head";
    case "PUT":
      return "put";
    case "DELETE":
      return "delete";
    case "POST":
      // DeleteObjects is POST /bucket?delete; multipart uploads are writes.
      return query.has("delete") ? "delete" : "put";
    default: {
      // Path style: /bucket (list) vs /bucket/key (object).
      const isBucketLevel = parsed.pathname.replace(/^\/+|\/+$/g, "").split("/").length <= 1;
      return query.has("list-type") || (isBucketLevel && !query.has("uploadId")) ? "list" : "get";
    }
  }
}
