/**
 * Who a client is, as the API server authenticates it: `kubectl auth whoami` on every Kubernetes
 * version. kubectl asks SelfSubjectReview, served only from 1.27 (beta; alpha and off by default in
 * 1.26); every version authenticates the same credentials through TokenReview, and maps a client
 * certificate to its subject (CN the user, each O a group) as kube-apiserver's x509 authenticator does.
 *
 * ## Expected flow
 * 1. SelfSubjectReview in the first of `authentication.k8s.io/v1`, `v1beta1`, `v1alpha1` the server serves.
 * 2. Else, for a bearer token (a kubeconfig `token`, `tokenFile`, exec plugin or OIDC id-token), a
 *    TokenReview of that token (the admin may create them: `system:masters`).
 * 3. Else the client certificate's subject.
 *
 * ## Caveats
 * - Step 2 needs `create` on tokenreviews, which only an admin-like user has: it is for the cluster's
 *   admin client. An authenticating proxy or impersonation is not seen by steps 2 and 3.
 */
import { X509Certificate } from "node:crypto";
import type { KubeClient } from "capstan";
import type { ServedApis } from "./served-apis.ts";

/** A user as the API server authenticates it (`userInfo` of a SelfSubjectReview or TokenReview). */
export interface AuthenticatedUser {
  readonly username: string;
  readonly uid?: string;
  readonly groups: readonly string[];
}

const AUTHENTICATION = "authentication.k8s.io";
/** Newest first: the first one served is asked. */
const SELF_SUBJECT_REVIEW_VERSIONS = ["v1", "v1beta1", "v1alpha1"] as const;
/** Every authenticated request is in this group (kube-apiserver's authenticator adds it). */
const AUTHENTICATED = "system:authenticated";

interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
}

/** Who `client` is; see the module documentation. */
export async function whoami(client: KubeClient, apis: ServedApis): Promise<AuthenticatedUser> {
  for (const version of SELF_SUBJECT_REVIEW_VERSIONS) {
    const groupVersion = `${AUTHENTICATION}/${version}`;
    if (!(await apis.serves(groupVersion, "selfsubjectreviews"))) continue;
    const review = await client.request<{ status?: { userInfo?: UserInfo } }>(
      "POST",
      `/apis/${groupVersion}/selfsubjectreviews`,
      { body: { apiVersion: groupVersion, kind: "SelfSubjectReview" } },
    );
    return user(review.status?.userInfo, "SelfSubjectReview");
  }
  const headers = await client.config.credentials.headers();
  const authorization = headers.authorization ?? headers.Authorization;
  const bearer = typeof authorization === "string" ? /^Bearer\s+(\S+)$/i.exec(authorization)?.[1] : undefined;
  if (bearer !== undefined) {
    const review = await client.request<{ status?: { authenticated?: boolean; user?: UserInfo; error?: string } }>(
      "POST",
      `/apis/${AUTHENTICATION}/v1/tokenreviews`,
      { body: { apiVersion: `${AUTHENTICATION}/v1`, kind: "TokenReview", spec: { token: bearer } } },
    );
    if (review.status?.authenticated !== true) {
      throw new Error(
        `whoami: the server did not authenticate the client's token: ${review.status?.error ?? "no reason"}`,
      );
    }
    return user(review.status.user, "TokenReview");
  }
  const certificate = client.config.tls.cert ?? client.config.credentials.clientCertificate?.()?.cert;
  if (certificate !== undefined) {
    const subject = new X509Certificate(certificate).subject.split("\n");
    const field = (name: string) =>
      subject.filter((s) => s.startsWith(`${name}=`)).map((s) => s.slice(name.length + 1));
    const [username] = field("CN");
    if (username !== undefined) return { username, groups: [...field("O"), AUTHENTICATED] };
  }
  throw new Error(
    "whoami: the server serves no SelfSubjectReview, and the client has neither a bearer token nor a client certificate with a CN",
  );
}

function user(info: UserInfo | undefined, source: string): AuthenticatedUser {
  if (info?.username === undefined) throw new Error(`whoami: the ${source} named no user`);
  return { username: info.username, ...(info.uid ? { uid: info.uid } : {}), groups: info.groups ?? [] };
}
