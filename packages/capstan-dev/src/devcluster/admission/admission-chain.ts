/**
 * Dynamic admission plugins run one after another, as kube-apiserver's admission chain runs its
 * plugins: every plugin's `mutate` in order, each on the object the previous one left, then every
 * plugin's `validate` in order on the final object; the first refusal fails the write and the plugins
 * after it do not run. A DELETE goes through every plugin's `mutateDelete`, then every `validate`.
 * server.ts chains the ValidatingAdmissionPolicy plugin before the webhooks, as kube-apiserver orders
 * ValidatingAdmissionPolicy before ValidatingAdmissionWebhook.
 */
import type { JsonObject } from "../registry/served-resource.ts";
import type { AdmissionRequestInfo, DynamicAdmission } from "../rest/types.ts";

export class AdmissionChain implements DynamicAdmission {
  constructor(private readonly plugins: readonly DynamicAdmission[]) {}

  async mutate(info: AdmissionRequestInfo, obj: JsonObject, old: JsonObject | undefined): Promise<JsonObject> {
    let current = obj;
    for (const plugin of this.plugins) current = await plugin.mutate(info, current, old);
    return current;
  }

  async mutateDelete(info: AdmissionRequestInfo, old: JsonObject): Promise<void> {
    for (const plugin of this.plugins) await plugin.mutateDelete(info, old);
  }

  async validate(info: AdmissionRequestInfo, obj: JsonObject | undefined, old: JsonObject | undefined): Promise<void> {
    for (const plugin of this.plugins) await plugin.validate(info, obj, old);
  }
}
