/**
 * The CustomResourceDefinition lifecycle, as apiextensions-apiserver's naming, establishing and
 * finalizing controllers run it, on top of the devcluster's dynamic registry.
 *
 * Expected flow:
 * - create/update: the CRD's names are checked against the other CRDs of its group
 *   (`NamesAccepted`: True/NoConflicts, or False/PluralConflict, SingularConflict,
 *   ShortNamesConflict, KindConflict, ListKindConflict with `"x" is already in use`). When accepted,
 *   every served version is registered (scope, status/scale subresources, short names, categories,
 *   printer columns, selectable fields, schema), versions no longer served are removed, and only then
 *   is `Established` set True (InitialNamesAccepted; False/Installing is published in between, as the
 *   naming and establishing controllers do in two writes), so a client that waits for Established finds
 *   the resource served. `status.acceptedNames` and `status.storedVersions` are maintained.
 * - delete: the CRD's DELETE marks it Terminating (InstanceDeletionPending) and adds the
 *   `customresourcecleanup.apiextensions.k8s.io` finalizer, as the CRD REST storage does. This
 *   controller then deletes every instance (InstanceDeletionInProgress), waits until none is left
 *   (instances' own finalizers are honoured), records InstanceDeletionCompleted, removes the
 *   finalizer, and the CRD goes; its resources stop being served when its DELETED event arrives.
 *
 * Guarantees: a resource is served only while its CRD exists with accepted names; instances never
 * outlive their CRD (a CRD that disappears without the finalizer has its storage bucket dropped).
 *
 * Assumptions: this controller is the only writer of CRD status (as the apiextensions controllers
 * are on a real server); the object store validates CRDs through {@link crdValidator} on every write.
 *
 * Conversion: with `strategy: None` versions share storage and only apiVersion differs; with
 * `strategy: Webhook` every served version other than the storage version is converted through
 * the CRD's webhook on each read and write (rest/webhook-converted.ts).
 *
 * Caveats: objects stored while another version was the storage version are shown as the storage
 * version without being converted (kube-apiserver converts them) until they are written again.
 */
import type { CustomResourceDefinition, CustomResourceDefinitionVersion } from "kubernetes-types/apiextensions/v1.d.ts";
import type { ObjectMeta } from "kubernetes-types/meta/v1.d.ts";
import { ApiError, failure } from "../machinery/status.ts";
import { nowRfc3339 } from "../machinery/timestamps.ts";
import { evaluateJsonPath, parseJsonPath } from "../printers/jsonpath.ts";
import {
  ALL_VERBS,
  bucketOf,
  type FieldGetter,
  type JsonObject,
  type ServedResource,
} from "../registry/served-resource.ts";
import type { Change } from "../storage/storage.ts";
import { compileCelRules } from "../validation/cel/compile.ts";
import { validateCustomResourceDefinition, validateCustomResourceDefinitionUpdate } from "../validation/crd.ts";
import type { CustomResourceDefinitionV1 } from "../validation/crd-internal.ts";
import { type FieldError, fieldErrorMessage } from "../validation/field-errors.ts";
import { validateObjectMeta, validateObjectMetaUpdateCommon } from "../validation/object-meta.ts";
import {
  type Controller,
  type ControllerContext,
  ignoreGoneOrChanged,
  metaOf,
  readObject,
  splitKey,
  watchAll,
} from "./cluster-view.ts";
import { removeFinalizer } from "./garbage-collector.ts";
import { LoopController } from "./reconcile-loop.ts";

const CRD_GROUP = "apiextensions.k8s.io";
const CRD_PLURAL = "customresourcedefinitions";
const CRD_BUCKET = `${CRD_GROUP}/${CRD_PLURAL}`;
/** apiextensionsv1.CustomResourceCleanupFinalizer */
export const CUSTOM_RESOURCE_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io";

/**
 * How long to wait before re-checking instances still held by their finalizers when no change wakes
 * us first (the real finalizer polls every 5 s; changes to instances wake us at once here).
 */
const INSTANCE_RECHECK_MS = 2000;

export interface CrdCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

/** A CRD as stored (plain JSON). */
export type Crd = CustomResourceDefinition & JsonObject;

/** Sets a condition as apiextensions' SetCRDCondition does: lastTransitionTime moves only when status flips. */
export function setCondition(
  conditions: CrdCondition[],
  next: Omit<CrdCondition, "lastTransitionTime">,
  now: string,
): CrdCondition[] {
  const out = conditions.map((c) => ({ ...c }));
  const existing = out.find((c) => c.type === next.type);
  if (!existing) {
    out.push({
      type: next.type,
      status: next.status,
      lastTransitionTime: now,
      reason: next.reason,
      message: next.message,
    });
    return out;
  }
  if (existing.status !== next.status) existing.lastTransitionTime = now;
  existing.status = next.status;
  existing.reason = next.reason;
  existing.message = next.message;
  return out;
}

function findCondition(crd: Crd, type: string): CrdCondition | undefined {
  return (crd.status?.conditions as CrdCondition[] | undefined)?.find((c) => c.type === type);
}

/** SetDefaults_CustomResourceDefinitionSpec: singular, listKind and the conversion strategy. */
export function defaultCrd(crd: JsonObject): void {
  const spec = crd["spec"] as CustomResourceDefinition["spec"] | undefined;
  if (!spec || typeof spec !== "object") return;
  const names = spec.names as CustomResourceDefinition["spec"]["names"] | undefined;
  if (names && typeof names === "object" && typeof names.kind === "string") {
    if (!names.singular) names.singular = names.kind.toLowerCase();
    if (!names.listKind && names.kind !== "") names.listKind = `${names.kind}List`;
  }
  spec.conversion ??= { strategy: "None" };
}

/** The names a CRD uses, from its status.acceptedNames (what its group's other CRDs must avoid). */
function acceptedNamesOf(crd: Crd): { resources: string[]; kinds: string[] } {
  const names = crd.status?.acceptedNames;
  if (!names) return { resources: [], kinds: [] };
  return {
    resources: [names.plural, names.singular ?? "", ...(names.shortNames ?? [])].filter((n) => n !== ""),
    kinds: [names.kind, names.listKind ?? ""].filter((n) => n !== ""),
  };
}

/**
 * The naming controller's decision for one CRD given the accepted names of the other CRDs of its
 * group: the names it may use and its NamesAccepted condition.
 */
export function calculateNames(
  crd: Crd,
  others: readonly Crd[],
): { acceptedNames: NonNullable<Crd["status"]>["acceptedNames"]; condition: Omit<CrdCondition, "lastTransitionTime"> } {
  const resources = new Set<string>();
  const kinds = new Set<string>();
  for (const other of others) {
    const used = acceptedNamesOf(other);
    for (const r of used.resources) resources.add(r);
    for (const k of used.kinds) kinds.add(k);
  }
  const requested = crd.spec.names;
  const accepted = crd.status?.acceptedNames;
  const next = { ...(accepted ?? { plural: "", kind: "" }) };
  let condition: Omit<CrdCondition, "lastTransitionTime"> | undefined;
  const conflict = (reason: string, name: string) => {
    condition = { type: "NamesAccepted", status: "False", reason, message: `"${name}" is already in use` };
  };
  // equalToAcceptedOrFresh: a name is fine if it is what this CRD already has, or nobody else uses it.
  const fresh = (requestedName: string, acceptedName: string | undefined, used: Set<string>) =>
    requestedName === acceptedName || !used.has(requestedName);

  if (fresh(requested.plural, accepted?.plural, resources)) next.plural = requested.plural;
  else conflict("PluralConflict", requested.plural);
  const singular = requested.singular ?? "";
  if (fresh(singular, accepted?.singular, resources)) next.singular = singular;
  else conflict("SingularConflict", singular);
  const shortNames = requested.shortNames ?? [];
  const acceptedShort = new Set(accepted?.shortNames ?? []);
  let shortOk = true;
  for (const short of shortNames) {
    if (!acceptedShort.has(short) && resources.has(short)) {
      conflict("ShortNamesConflict", short);
      shortOk = false;
      break;
    }
  }
  if (shortOk) next.shortNames = shortNames.length > 0 ? [...shortNames] : undefined;
  if (fresh(requested.kind, accepted?.kind, kinds)) next.kind = requested.kind;
  else conflict("KindConflict", requested.kind);
  const listKind = requested.listKind ?? "";
  if (fresh(listKind, accepted?.listKind, kinds)) next.listKind = listKind;
  else conflict("ListKindConflict", listKind);
  next.categories = requested.categories && requested.categories.length > 0 ? [...requested.categories] : undefined;
  const cleaned = Object.fromEntries(
    Object.entries(next).filter(([, v]) => v !== undefined && v !== ""),
  ) as typeof next;
  return {
    acceptedNames: cleaned,
    condition: condition ?? {
      type: "NamesAccepted",
      status: "True",
      reason: "NoConflicts",
      message: "no conflicts found",
    },
  };
}

/** A field-selector getter for a CRD selectableField (values rendered as the apiserver renders them). */
function selectableFieldGetter(jsonPath: string): FieldGetter | undefined {
  try {
    const path = parseJsonPath(jsonPath);
    return (obj) => {
      const value = evaluateJsonPath(path, obj)[0];
      if (value === undefined || value === null) return "";
      return typeof value === "string" ? value : String(value);
    };
  } catch {
    return undefined;
  }
}

/**
 * The answer to a create while the CRD is terminating (customresource_handler.go): 405 with its own
 * message. The descriptor's create hook is where the object store lets a kind refuse a create.
 */
export function createWhileTerminating(group: string, plural: string): ApiError {
  return new ApiError(
    failure(405, "MethodNotAllowed", "create not allowed while custom resource definition is terminating", {
      group,
      kind: plural,
    }),
  );
}

/** The served-resource descriptor of one version of a CRD (refusing creates while the CRD terminates). */
export function servedFromCrd(
  crd: Crd,
  version: CustomResourceDefinitionVersion,
  options: { terminating?: boolean } = {},
): ServedResource {
  const names = crd.status?.acceptedNames ?? crd.spec.names;
  const scale = version.subresources?.scale;
  const fieldSelectors: Record<string, FieldGetter> = {};
  for (const field of version.selectableFields ?? []) {
    const getter = selectableFieldGetter(field.jsonPath);
    if (getter) fieldSelectors[field.jsonPath.replace(/^\./, "")] = getter;
  }
  return {
    group: crd.spec.group,
    version: version.name,
    kind: names.kind,
    listKind: names.listKind ?? `${names.kind}List`,
    plural: names.plural,
    singular: names.singular ?? names.kind.toLowerCase(),
    namespaced: crd.spec.scope === "Namespaced",
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
    verbs: ALL_VERBS,
    subresources: {
      status: version.subresources?.status !== undefined,
      scale: scale
        ? {
            specReplicasPath: scale.specReplicasPath,
            statusReplicasPath: scale.statusReplicasPath,
            ...(scale.labelSelectorPath ? { labelSelectorPath: scale.labelSelectorPath } : {}),
          }
        : undefined,
    },
    generation: "all-but-metadata-and-status",
    fieldSelectors,
    storageBucket: `${crd.spec.group}/${names.plural}`,
    printerColumns: version.additionalPrinterColumns?.map((c) => ({ ...c })),
    schema: version.schema?.openAPIV3Schema,
    custom: true,
    ...webhookConversionOf(crd, version),
    ...(options.terminating
      ? {
          defaultOnCreate: () => {
            throw createWhileTerminating(crd.spec.group, names.plural);
          },
        }
      : {}),
  };
}

/**
 * What a version served through the CRD's conversion webhook needs (strategy Webhook, any version
 * but the storage version): the storage version's descriptor and the webhook's client config.
 */
function webhookConversionOf(
  crd: Crd,
  version: CustomResourceDefinitionVersion,
): Pick<ServedResource, "webhookConversion"> {
  const conversion = crd.spec.conversion;
  const storage = crd.spec.versions.find((v) => v.storage);
  if (conversion?.strategy !== "Webhook" || !storage || storage.name === version.name) return {};
  const webhook = conversion.webhook;
  return {
    webhookConversion: {
      storage: servedFromCrd(crd, storage),
      crdName: metaOf(crd).name ?? "",
      clientConfig: { ...(webhook?.clientConfig ?? {}) },
      conversionReviewVersions: webhook?.conversionReviewVersions ?? [],
    },
  };
}

function isCrdResource(served: ServedResource): boolean {
  return served.group === CRD_GROUP && served.plural === CRD_PLURAL;
}

/** x-kubernetes-validations rules are compiled (and refused when they do not compile) on every CRD write. */
const CEL = { compileRules: compileCelRules };

/**
 * CRD create/update validation (the CRD strategy's Validate/ValidateUpdate). The object store already
 * validated the generic ObjectMeta rules; those errors are dropped here so none is reported twice.
 */
export function crdValidator(served: ServedResource, obj: JsonObject, old: JsonObject | undefined): FieldError[] {
  if (!isCrdResource(served)) return [];
  const crd = obj as unknown as CustomResourceDefinitionV1;
  const errors = old
    ? validateCustomResourceDefinitionUpdate(crd, old as unknown as CustomResourceDefinitionV1, CEL)
    : validateCustomResourceDefinition(crd, CEL);
  const meta = obj.metadata as ObjectMeta | undefined;
  const generic = old
    ? validateObjectMetaUpdateCommon(meta, old.metadata as ObjectMeta | undefined, false)
    : validateObjectMeta(meta, { namespaced: false, nameRule: "dns1123subdomain" });
  const already = new Set(generic.map(fieldErrorMessage));
  return errors.filter((e) => !already.has(fieldErrorMessage(e)));
}

interface Registration {
  group: string;
  plural: string;
  versions: Set<string>;
  /** The spec and accepted names it was registered from: unchanged means nothing to re-register. */
  signature: string;
  /** Re-registered to refuse creates because the CRD is being deleted. */
  terminating?: boolean;
}

export class CrdLifecycle extends LoopController implements Controller {
  /** CRD name -> what it registered. */
  private readonly registered = new Map<string, Registration>();
  /** Storage bucket of a terminating CRD's instances -> CRD name (instance changes wake it). */
  private readonly cleaning = new Map<string, string>();

  constructor(private readonly ctx: ControllerContext) {
    // apiextensions-apiserver's controllers write as the API server itself.
    super("crd-lifecycle", "kube-apiserver");
  }

  start(): this {
    this.installCrdStrategy();
    for (const stored of this.ctx.store.storage.list(CRD_BUCKET, "")) this.loop.add(stored.key);
    this.unsubscribe = watchAll(this.ctx.store, (change) => this.onChange(change));
    return this;
  }

  /**
   * The CRD kind's own strategy: defaulting of names, and the REST storage's delete, which marks the
   * CRD Terminating with the cleanup finalizer instead of deleting it at once.
   */
  private installCrdStrategy(): void {
    const served = this.ctx.registry.get(CRD_GROUP, "v1", CRD_PLURAL);
    if (!served) return;
    this.ctx.registry.add({
      ...served,
      deletion: {
        // Until deletion starts, a CRD is always held (the finalizer is added below); afterwards only
        // its metadata.finalizers hold it, so removing the cleanup finalizer deletes it.
        holds: (crd) => !metaOf(crd).deletionTimestamp,
        markTerminating: (crd) => {
          const meta = crd.metadata as { finalizers?: string[] };
          const finalizers = meta.finalizers ?? [];
          if (!finalizers.includes(CUSTOM_RESOURCE_CLEANUP_FINALIZER)) {
            meta.finalizers = [...finalizers, CUSTOM_RESOURCE_CLEANUP_FINALIZER];
          }
          const status = (crd["status"] ?? {}) as { conditions?: CrdCondition[] };
          status.conditions = setCondition(
            status.conditions ?? [],
            {
              type: "Terminating",
              status: "True",
              reason: "InstanceDeletionPending",
              message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
            },
            nowRfc3339(),
          );
          crd["status"] = status;
        },
      },
    });
    this.ctx.store.mutators.push((target, obj) => {
      if (isCrdResource(target)) defaultCrd(obj);
    });
    this.ctx.store.validators.push(crdValidator);
  }

  private onChange(change: Change): void {
    if (change.bucket === CRD_BUCKET) {
      if (change.type === "DELETED") {
        this.unregister(change.key);
        // Names it held may now be free for CRDs that conflicted with it.
        for (const stored of this.ctx.store.storage.list(CRD_BUCKET, "")) {
          if (stored.data.includes('"NamesAccepted","status":"False"')) this.loop.add(stored.key);
        }
        return;
      }
      this.loop.add(change.key);
      return;
    }
    const crdName = this.cleaning.get(change.bucket);
    if (crdName) this.loop.add(crdName);
  }

  private unregister(crdName: string): void {
    const registration = this.registered.get(crdName);
    this.registered.delete(crdName);
    if (!registration) return;
    for (const [bucket, name] of this.cleaning) if (name === crdName) this.cleaning.delete(bucket);
    this.ctx.registry.remove(registration.group, registration.plural);
    // Instances are gone when the finalizer ran; this drops any that a finalizer-less removal left behind.
    this.ctx.store.storage.dropBucket(`${registration.group}/${registration.plural}`);
  }

  protected async handle(name: string): Promise<{ requeueAfterMs?: number } | undefined> {
    const crd = readObject(this.ctx.store, CRD_BUCKET, name) as Crd | undefined;
    if (!crd) {
      this.unregister(name);
      return undefined;
    }
    const crdServed = this.ctx.registry.get(CRD_GROUP, "v1", CRD_PLURAL);
    if (!crdServed) return undefined;
    if (metaOf(crd).deletionTimestamp) return this.finalize(crdServed, crd);
    await this.establish(crdServed, crd);
    return undefined;
  }

  private async establish(crdServed: ServedResource, crd: Crd): Promise<void> {
    const name = metaOf(crd).name ?? "";
    const others = this.ctx.store.storage
      .list(CRD_BUCKET, "")
      .filter((s) => s.key !== name)
      .map((s) => JSON.parse(s.data) as Crd)
      .filter((other) => other.spec?.group === crd.spec.group);
    const { acceptedNames, condition } = calculateNames(crd, others);
    const now = nowRfc3339();
    let conditions = setCondition((crd.status?.conditions as CrdCondition[]) ?? [], condition, now);
    const storage = crd.spec.versions.find((v) => v.storage)?.name;
    const storedVersions = [...(crd.status?.storedVersions ?? [])];
    if (storage && !storedVersions.includes(storage)) storedVersions.push(storage);
    const write = (next: CrdCondition[]) =>
      ignoreGoneOrChanged(() =>
        this.ctx.store.guaranteedUpdate(crdServed, "", name, "status", (current) => {
          if (metaOf(current).uid !== metaOf(crd).uid) return current;
          const status = (current["status"] ?? {}) as Record<string, unknown>;
          current["status"] = { ...status, conditions: next, acceptedNames, storedVersions };
          return current;
        }),
      );

    if (condition.status === "True") {
      if (findCondition(crd, "Established")?.status !== "True") {
        // The naming controller's write: names accepted, not yet served (watchers see it, as on a real server).
        conditions = setCondition(
          conditions,
          {
            type: "Established",
            status: "False",
            reason: "Installing",
            message: "the initial names have been accepted",
          },
          now,
        );
        await write(conditions);
      }
      // The establishing controller's: serve first, then say so.
      this.register({ ...crd, status: { ...crd.status, acceptedNames } } as Crd);
      conditions = setCondition(
        conditions,
        {
          type: "Established",
          status: "True",
          reason: "InitialNamesAccepted",
          message: "the initial names have been accepted",
        },
        now,
      );
    } else if (findCondition(crd, "Established")?.status !== "True") {
      conditions = setCondition(
        conditions,
        { type: "Established", status: "False", reason: "NotAccepted", message: "not all names are accepted" },
        now,
      );
    }
    await write(conditions);
  }

  /** Serves every `served` version of the CRD and stops serving the others. */
  private register(crd: Crd): void {
    const name = metaOf(crd).name ?? "";
    const names = crd.status?.acceptedNames ?? crd.spec.names;
    const previous = this.registered.get(name);
    const signature = JSON.stringify([crd.spec, names]);
    if (previous?.signature === signature) return;
    if (previous && (previous.group !== crd.spec.group || previous.plural !== names.plural)) {
      this.ctx.registry.remove(previous.group, previous.plural);
    }
    const versions = new Set<string>();
    for (const version of crd.spec.versions) {
      if (!version.served) continue;
      this.ctx.registry.add(servedFromCrd(crd, version));
      versions.add(version.name);
    }
    for (const old of previous?.versions ?? []) {
      if (!versions.has(old)) this.ctx.registry.remove(crd.spec.group, names.plural, old);
    }
    this.registered.set(name, { group: crd.spec.group, plural: names.plural, versions, signature });
  }

  /** The finalizing controller: delete every instance, then release the CRD. */
  private async finalize(crdServed: ServedResource, crd: Crd): Promise<{ requeueAfterMs?: number } | undefined> {
    const meta = metaOf(crd);
    const name = meta.name ?? "";
    const uid = meta.uid ?? "";
    if (!(meta.finalizers ?? []).includes(CUSTOM_RESOURCE_CLEANUP_FINALIZER)) return undefined;
    const established = findCondition(crd, "Established")?.status === "True";
    const registration = this.registered.get(name);
    let terminating: Omit<CrdCondition, "lastTransitionTime">;
    if (established && registration) {
      const bucket = `${registration.group}/${registration.plural}`;
      this.cleaning.set(bucket, name);
      if (!registration.terminating) {
        registration.terminating = true;
        for (const version of crd.spec.versions) {
          if (registration.versions.has(version.name)) {
            this.ctx.registry.add(servedFromCrd(crd, version, { terminating: true }));
          }
        }
      }
      const instanceServed = this.ctx.registry
        .versionsOf(registration.group, registration.plural)
        .find((s) => bucketOf(s) === bucket);
      await this.writeTerminating(crdServed, crd, {
        type: "Terminating",
        status: "True",
        reason: "InstanceDeletionInProgress",
        message: "CustomResource deletion is in progress",
      });
      if (instanceServed) {
        for (const stored of this.ctx.store.storage.list(bucket, "")) {
          const instance = JSON.parse(stored.data) as JsonObject;
          if (metaOf(instance).deletionTimestamp) continue;
          const { namespace, name: instanceName } = splitKey(stored.key);
          // Straight through the storage, without admission, as apiextensions' finalizer deletes them.
          await ignoreGoneOrChanged(() =>
            this.ctx.store.delete(instanceServed, namespace, instanceName, { skipAdmission: true }),
          );
        }
      }
      if (this.ctx.store.storage.count(bucket) > 0) return { requeueAfterMs: INSTANCE_RECHECK_MS };
      terminating = {
        type: "Terminating",
        status: "False",
        reason: "InstanceDeletionCompleted",
        message: "removed all instances",
      };
    } else {
      terminating = {
        type: "Terminating",
        status: "False",
        reason: "NeverEstablished",
        message: "resource was never established",
      };
    }
    await this.writeTerminating(crdServed, crd, terminating);
    await removeFinalizer(this.ctx, crdServed, "", name, uid, CUSTOM_RESOURCE_CLEANUP_FINALIZER);
    return undefined;
  }

  private async writeTerminating(
    crdServed: ServedResource,
    crd: Crd,
    condition: Omit<CrdCondition, "lastTransitionTime">,
  ): Promise<void> {
    const name = metaOf(crd).name ?? "";
    const now = nowRfc3339();
    await ignoreGoneOrChanged(() =>
      this.ctx.store.guaranteedUpdate(crdServed, "", name, "status", (current) => {
        const status = (current["status"] ?? {}) as { conditions?: CrdCondition[] };
        current["status"] = { ...status, conditions: setCondition(status.conditions ?? [], condition, now) };
        return current;
      }),
    );
  }
}
