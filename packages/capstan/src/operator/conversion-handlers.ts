/**
 * `op.convert(Kind, spokes)`: the conversion webhook of a kind defined with several versions. The
 * kind's typed version (the first of `versions`, the one the operator's code reads and writes) is
 * the hub; every other version is a spoke with a pair of functions to and from the hub
 * (controller-runtime's Hub/Convertible, as functions). The webhook server serves each kind at
 * `/convert-<group with dots as dashes>-<kind in lower case>`, and the kind's CRD is generated with
 * `conversion.strategy: Webhook` pointing there (webhook-configurations.ts).
 */
import { isCustomResource } from "../resources/define-resource.ts";
import type { CustomResource } from "../resources/resource-types.ts";
import type { ConversionHandlerSpec, SpokeConversion } from "../webhooks/conversion.ts";

/** One kind's registered conversions, as generation and the webhook server see them. */
export interface ConversionWebhook {
  kind: CustomResource;
  /** The path it is served at. */
  path: string;
  /** The hub version (the kind's typed version). */
  hub: string;
  spokes: ReadonlyMap<string, SpokeConversion>;
}

/** The conversion webhooks of one operator. */
export class ConversionHandlers {
  private readonly list: ConversionWebhook[] = [];

  /** Registers `kind`'s spokes; throws when they do not cover exactly its other versions. */
  add(kind: CustomResource, spokes: Readonly<Record<string, SpokeConversion>>): void {
    const where = `convert(${kind?.kind ?? String(kind)})`;
    if (!isCustomResource(kind)) throw new Error(`${where}: only kinds made by defineResource have conversions`);
    if (this.list.some((c) => c.kind.crdName === kind.crdName)) throw new Error(`${where}: registered twice`);
    const hub = kind.version;
    const others = kind.versions.map((v) => v.name).filter((v) => v !== hub);
    if (others.length === 0) {
      throw new Error(`${where}: the kind has one version (${hub}); conversions need versions: [hub, ...others]`);
    }
    const map = new Map<string, SpokeConversion>();
    for (const [version, spoke] of Object.entries(spokes)) {
      if (version === hub) {
        throw new Error(`${where}: ${hub} is the hub (the typed version); give functions for the other versions only`);
      }
      if (!others.includes(version)) {
        throw new Error(
          `${where}: ${version} is not a version of ${kind.kind} (${kind.versions.map((v) => v.name).join(", ")})`,
        );
      }
      if (typeof spoke?.toHub !== "function" || typeof spoke?.fromHub !== "function") {
        throw new Error(`${where}: ${version} needs both toHub and fromHub functions`);
      }
      map.set(version, spoke);
    }
    const missing = others.filter((v) => !map.has(v));
    if (missing.length > 0) throw new Error(`${where}: no conversion for ${missing.join(", ")} (toHub and fromHub)`);
    this.list.push({
      kind,
      path: `/convert-${kind.group.replace(/\./g, "-")}-${kind.kind.toLowerCase()}`,
      hub,
      spokes: map,
    });
  }

  /** Every registered kind, in registration order. */
  all(): readonly ConversionWebhook[] {
    return this.list;
  }

  /** What the webhook server runs for each path. */
  specs(): { path: string; spec: ConversionHandlerSpec }[] {
    return this.list.map((c) => ({
      path: c.path,
      spec: {
        name: `conversion of ${c.kind.kind}`,
        type: "conversion",
        group: c.kind.group,
        kind: c.kind.kind,
        hub: c.hub,
        spokes: c.spokes,
      },
    }));
  }
}
