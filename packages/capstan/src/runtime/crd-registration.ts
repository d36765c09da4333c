/**
 * Registers an operator's CustomResourceDefinitions at start-up: create each one, or update it
 * when its spec differs, then wait until the API server serves it (`Established`).
 *
 * ## Expected flow
 * `await ensureCrds(client, [toCrd(Widget)], { signal })` before starting the manager.
 *
 * ## Guarantees
 * - "Differs" is judged by the server itself: the desired spec is sent as a dry-run update and the
 *   defaulted result is compared with the stored spec, so fields the server fills in (conversion
 *   strategy, defaults inside schemas) never cause a pointless write, and a removed field does
 *   cause one.
 * - Several operators starting together converge: a create that meets AlreadyExists and an update
 *   that meets Conflict start over from a fresh read (up to {@link MAX_ATTEMPTS} times).
 * - Resolves only when every CRD has `Established=True`; rejects at once with the server's message
 *   when a CRD's names are refused (`NamesAccepted=False`), and after `timeout` otherwise.
 * - A CRD being deleted (its `deletionTimestamp` set: the server is deleting its objects, which
 *   takes minutes for thousands) cannot be updated or kept: registering waits until the server has
 *   removed it, then creates it again ("created"), within `timeout`; the same when it is deleted
 *   while we wait for `Established`. Its objects are gone with it, as `kubectl delete crd` means.
 *
 * ## Caveats
 * - Labels and annotations of the desired CRD are merged into the stored ones, never removed.
 * - A conversion webhook the stored CRD has is kept when the desired CRD sets none: its client
 *   config and CA are the deployment's (`capstan generate crds`, cert-manager's injector).
 * - A CRD whose stored version the new spec drops is the server's to refuse (422), not ours.
 * - A `description` the stored schema has where the desired one has none (same version, same field)
 *   is kept: a compiled operator cannot read the TSDoc comments `capstan generate crds` wrote into
 *   the CRD it applied, and registering must not erase them. A description the desired CRD has
 *   replaces the stored one; removing one takes `kubectl apply` of the generated CRD.
 */
import type { CustomResourceDefinition, JSONSchemaProps } from "kubernetes-types/apiextensions/v1.d.ts";
import { isAlreadyExists, isConflict, isNotFound } from "../client/errors.ts";
import type { KubeClient, ResourceClient } from "../client/resource-client.ts";
import type { ResourceKind } from "../client/types.ts";
import { sleep } from "./clock.ts";
import { type Duration, toMilliseconds } from "./duration.ts";
import { type RuntimeLogger, silentLogger } from "./log.ts";

/** The apiextensions.k8s.io/v1 CustomResourceDefinition kind. */
export const CRD_KIND: ResourceKind<CustomResourceDefinition> = {
  group: "apiextensions.k8s.io",
  version: "v1",
  kind: "CustomResourceDefinition",
  plural: "customresourcedefinitions",
  namespaced: false,
};

/** Options of {@link ensureCrds}. */
export interface EnsureCrdsOptions {
  signal?: AbortSignal;
  /** How long to wait for all CRDs to be Established (default 60 s). */
  timeout?: Duration;
  /** Field manager recorded for our writes (default `capstan`). */
  fieldManager?: string;
  logger?: RuntimeLogger;
}

/** What happened to each CRD. */
export type CrdAction = "created" | "updated" | "unchanged";

/**
 * Read-modify-write rounds before giving up: each lost race means another operator just wrote the
 * same CRD, so a handful of rounds is plenty; more would only hide a livelock.
 */
export const MAX_ATTEMPTS = 8;
/** Pause between Established checks: a CRD is usually served within a few hundred ms. */
const POLL_MS = 50;
/** Upper bound of the random pause after a lost race, to de-synchronise competing operators. */
const RACE_JITTER_MS = 25;
/** Pause between checks of a CRD being deleted: its objects go first, which takes seconds to minutes. */
const TERMINATING_POLL_MS = 250;

/**
 * Creates or updates each CRD and waits until all are Established; see the module documentation.
 * Resolves with the action taken per CRD name.
 */
export async function ensureCrds(
  client: KubeClient,
  crds: readonly CustomResourceDefinition[],
  options: EnsureCrdsOptions = {},
): Promise<Record<string, CrdAction>> {
  const api = client.resource(CRD_KIND);
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new Error(`CRDs not Established within ${String(options.timeout ?? "60s")}`)),
    toMilliseconds(options.timeout ?? "60s"),
  );
  const onAbort = () => deadline.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  try {
    const results = await Promise.all(
      crds.map(async (crd) => {
        const name = crd.metadata?.name;
        if (!name) throw new Error("ensureCrds: every CRD needs metadata.name (<plural>.<group>)");
        const logger = options.logger ?? silentLogger;
        let action: CrdAction;
        do {
          action = await upsert(api, crd, name, options, deadline.signal);
          logger.info({ crd: name, action }, "CRD registered");
        } while (!(await waitEstablished(api, name, deadline.signal)));
        return [name, action] as const;
      }),
    );
    return Object.fromEntries(results);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}

type CrdApi = ResourceClient<CustomResourceDefinition>;

async function upsert(
  api: CrdApi,
  desired: CustomResourceDefinition,
  name: string,
  options: EnsureCrdsOptions,
  signal: AbortSignal,
): Promise<CrdAction> {
  const fieldManager = options.fieldManager ?? "capstan";
  let lastError: unknown;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    throwIfAborted(signal);
    const current = await getCrd(api, name, signal);
    if (current === undefined) {
      try {
        await api.create(
          { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", ...desired },
          { signal, fieldManager },
        );
        return "created";
      } catch (createErr) {
        if (!isAlreadyExists(createErr)) throw createErr;
        lastError = createErr; // another operator created it first: read theirs
        await sleep(Math.random() * RACE_JITTER_MS, signal);
        continue;
      }
    }
    if (current.metadata?.deletionTimestamp !== undefined) {
      await untilDeleted(api, current, options.logger ?? silentLogger, signal);
      continue;
    }
    const candidate: CustomResourceDefinition = {
      ...current,
      metadata: {
        ...current.metadata,
        labels: mergeMaps(current.metadata?.labels, desired.metadata?.labels),
        annotations: mergeMaps(current.metadata?.annotations, desired.metadata?.annotations),
      },
      spec: keepDescriptions(keepWebhookConversion(desired.spec, current.spec), current.spec),
    };
    try {
      const preview = await api.update(candidate, { signal, dryRun: true, fieldManager });
      if (
        deepEqual(preview.spec, current.spec) &&
        deepEqual(preview.metadata?.labels, current.metadata?.labels) &&
        deepEqual(preview.metadata?.annotations, current.metadata?.annotations)
      ) {
        return "unchanged";
      }
      await api.update(candidate, { signal, fieldManager });
      return "updated";
    } catch (err) {
      if (!isConflict(err)) throw err;
      lastError = err; // written meanwhile: start over from a fresh read
      await sleep(Math.random() * RACE_JITTER_MS, signal);
    }
  }
  throw new Error(`CRD ${name}: still racing with other writers after ${MAX_ATTEMPTS} attempts`, { cause: lastError });
}

function keepWebhookConversion(
  desired: CustomResourceDefinition["spec"],
  current: CustomResourceDefinition["spec"],
): CustomResourceDefinition["spec"] {
  const wanted = desired.conversion?.strategy ?? "None";
  if (wanted === "None" && current.conversion?.strategy === "Webhook") {
    return { ...desired, conversion: current.conversion };
  }
  return desired;
}

function keepDescriptions(
  desired: CustomResourceDefinition["spec"],
  current: CustomResourceDefinition["spec"],
): CustomResourceDefinition["spec"] {
  const versions = desired.versions.map((version) => {
    const stored = current.versions.find((v) => v.name === version.name)?.schema?.openAPIV3Schema;
    const schema = version.schema?.openAPIV3Schema;
    if (stored === undefined || schema === undefined) return version;
    return { ...version, schema: { ...version.schema, openAPIV3Schema: withDescriptions(schema, stored) } };
  });
  return { ...desired, versions };
}

/** `schema` with the descriptions of `stored` where it has none; never inside anyOf/allOf, as the writer. */
function withDescriptions(schema: JSONSchemaProps, stored: JSONSchemaProps): JSONSchemaProps {
  const out: JSONSchemaProps = { ...schema };
  if (out.description === undefined && typeof stored.description === "string") out.description = stored.description;
  if (schema.properties !== undefined && stored.properties !== undefined) {
    const storedProperties = stored.properties;
    out.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([name, sub]) => {
        const before = storedProperties[name];
        return [name, before === undefined ? sub : withDescriptions(sub, before)];
      }),
    );
  }
  if (isSchema(schema.items) && isSchema(stored.items)) out.items = withDescriptions(schema.items, stored.items);
  if (isSchema(schema.additionalProperties) && isSchema(stored.additionalProperties)) {
    out.additionalProperties = withDescriptions(schema.additionalProperties, stored.additionalProperties);
  }
  return out;
}

function isSchema(value: unknown): value is JSONSchemaProps {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The stored CRD, or undefined when there is none (404). */
async function getCrd(api: CrdApi, name: string, signal: AbortSignal): Promise<CustomResourceDefinition | undefined> {
  try {
    return await api.get(name, { signal });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Waits until `crd`, being deleted, is gone (or replaced by a new one of the same name). */
async function untilDeleted(
  api: CrdApi,
  crd: CustomResourceDefinition,
  logger: RuntimeLogger,
  signal: AbortSignal,
): Promise<void> {
  const name = crd.metadata?.name ?? "";
  const since = crd.metadata?.deletionTimestamp ?? "";
  logger.info(
    { crd: name, deletionTimestamp: since },
    "CRD is being deleted: waiting until the API server has removed it, to create it again",
  );
  try {
    for (;;) {
      await sleep(TERMINATING_POLL_MS, signal);
      const now = await getCrd(api, name, signal);
      if (now === undefined || now.metadata?.uid !== crd.metadata?.uid) return;
    }
  } catch (err) {
    if (!signal.aborted) throw err;
    const reason: unknown = signal.reason;
    const why = reason instanceof Error ? reason.message : "ensureCrds aborted";
    throw new Error(
      `${why}: CRD ${name} was still being deleted (deletionTimestamp ${since}); it is created again once the API server has removed it and its objects`,
      { cause: reason },
    );
  }
}

/** True once `name` is Established; false when it was deleted or is being deleted meanwhile. */
async function waitEstablished(api: CrdApi, name: string, signal: AbortSignal): Promise<boolean> {
  for (;;) {
    throwIfAborted(signal);
    const crd = await getCrd(api, name, signal);
    if (crd === undefined || crd.metadata?.deletionTimestamp !== undefined) return false;
    const conditions = crd.status?.conditions ?? [];
    const names = conditions.find((c) => c.type === "NamesAccepted");
    if (names?.status === "False") {
      throw new Error(`CRD ${name}: names not accepted (${names.reason ?? ""}): ${names.message ?? ""}`);
    }
    if (conditions.some((c) => c.type === "Established" && c.status === "True")) return true;
    await sleep(POLL_MS, signal);
  }
}

function throwIfAborted(signal: AbortSignal): void {
  if (!signal.aborted) return;
  const reason: unknown = signal.reason;
  throw reason instanceof Error ? reason : new Error("ensureCrds aborted");
}

function mergeMaps(
  a: Record<string, string> | undefined,
  b: Record<string, string> | undefined,
): Record<string, string> | undefined {
  if (b === undefined || Object.keys(b).length === 0) return a;
  return { ...a, ...b };
}

/** Structural equality of JSON values (key order does not matter, array order does). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => deepEqual(v, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => deepEqual(ao[k], bo[k]));
}
