/**
 * The admitted objects in the version a webhook is called for (apiserver admission/plugin/webhook
 * generic/conversion.go and VersionedAttributes): the store admits an object in one version
 * (`info.served`: the storage version of a kind served through conversion); a webhook whose rules
 * matched another version of the same resource gets the objects converted to it, and what it
 * patched is converted back.
 *
 * - a conversion view over the storage (events.k8s.io Events over core ones, autoscaling/v1
 *   HorizontalPodAutoscalers over v2): the view's fromStorage / toStorage;
 * - a CRD version its webhook converts: the CRD's conversion webhook (a failure fails the request
 *   with its 500, as kube-apiserver's conversion does);
 * - another version of the same storage (a CRD with conversion None): apiVersion rewritten.
 *
 * Conversions of one admission step are made once per version ({@link VersionedObjects}).
 */
import { groupVersion, type JsonObject, type ServedResource } from "../registry/served-resource.ts";
import type { CustomResourceConverter } from "../rest/types.ts";
import { presentConverted, toStorageVersion } from "../rest/webhook-converted.ts";

/** The objects of one admission step, in each version asked for. */
export class VersionedObjects {
  private readonly byVersion = new Map<ServedResource, Promise<Versioned>>();

  constructor(
    private readonly converter: CustomResourceConverter | undefined,
    /** The resource the objects are admitted as: their version. */
    private readonly admitted: ServedResource,
    private readonly obj: JsonObject | undefined,
    private readonly old: JsonObject | undefined,
  ) {}

  /** The objects in `version`'s version. */
  in(version: ServedResource): Promise<Versioned> {
    if (sameResource(version, this.admitted)) return Promise.resolve({ obj: this.obj, old: this.old });
    let converted = this.byVersion.get(version);
    if (converted === undefined) {
      converted = Promise.all([this.convert(this.obj, version), this.convert(this.old, version)]).then(
        ([obj, old]) => ({ obj, old }),
      );
      this.byVersion.set(version, converted);
    }
    return converted;
  }

  private async convert(obj: JsonObject | undefined, to: ServedResource): Promise<JsonObject | undefined> {
    if (obj === undefined) return undefined;
    if (to.webhookConversion) {
      const [shown] = await presentConverted(this.converter, to, to.webhookConversion, [JSON.stringify(obj)]);
      return JSON.parse(shown!) as JsonObject;
    }
    if (to.conversion && sameResource(to.conversion.storage, this.admitted)) {
      return to.conversion.fromStorage(structuredClone(obj));
    }
    return { ...obj, apiVersion: groupVersion(to) };
  }
}

/** An object and its stored version in one version (undefined where the request has none). */
export interface Versioned {
  obj: JsonObject | undefined;
  old: JsonObject | undefined;
}

/** `obj`, a webhook's patched object in `version`'s version, back in the version of `admitted`. */
export async function backToAdmitted(
  converter: CustomResourceConverter | undefined,
  admitted: ServedResource,
  version: ServedResource,
  obj: JsonObject,
): Promise<JsonObject> {
  if (sameResource(version, admitted)) return obj;
  if (version.webhookConversion) return toStorageVersion(converter, version.webhookConversion, obj);
  if (version.conversion && sameResource(version.conversion.storage, admitted))
    return version.conversion.toStorage(obj);
  return { ...obj, apiVersion: groupVersion(admitted) };
}

/** Whether two descriptors serve the same group, version and resource (a CRD's are rebuilt as it changes). */
export function sameResource(a: ServedResource, b: ServedResource): boolean {
  return a.group === b.group && a.version === b.version && a.plural === b.plural;
}
