/** The part of aws4 (which ships no types) that aws-request.ts uses. */
declare module "aws4" {
  interface SignableRequest {
    service: string;
    region: string;
    method: string;
    host: string;
    /** The path as sent, with its query string. */
    path: string;
    headers: Record<string, string>;
  }
  interface Credentials {
    accessKeyId: string;
    secretAccessKey: string;
    sessionToken?: string;
  }
  /** Adds Authorization, X-Amz-Date (and X-Amz-Security-Token) to `request.headers`, in place. */
  export function sign(request: SignableRequest, credentials: Credentials): SignableRequest;
  const aws4: { sign: typeof sign };
  export default aws4;
}
