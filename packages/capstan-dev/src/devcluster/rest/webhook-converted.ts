/**
 * The versions of a CRD converted by its webhook (conversion strategy Webhook), as the store serves
 * them: objects are stored in the storage version; a write's object is converted to it before the
 * store prepares it, and what a client reads (get, list, watch, a write's answer) is converted from
 * it into the version the client asked for. The conversion itself is the store's `converter`
 * (conversion/conversion-webhook.ts), which sends only the objects not already in that version.
 *
 * Guarantees: a watch's events reach the client in the order they happened, each converted; a
 * conversion that fails fails the request (500) or, in a watch, ends it without an ERROR event, as
 * kube-apiserver's watch server does when it cannot encode an event (the client watches again).
 */
import { ApiError, internalError } from "../machinery/status.ts";
import {
  groupVersion,
  type JsonObject,
  type ServedResource,
  type WebhookConversion,
} from "../registry/served-resource.ts";
import { serialize } from "./encoding.ts";
import type { CustomResourceConverter, WatchSink } from "./types.ts";

function converterOf(converter: CustomResourceConverter | undefined): CustomResourceConverter {
  if (converter === undefined) throw internalError(new Error("no conversion webhook caller is configured"));
  return converter;
}

/** `obj` (in the version a client wrote) in the storage version. */
export async function toStorageVersion(
  converter: CustomResourceConverter | undefined,
  conversion: WebhookConversion,
  obj: JsonObject,
): Promise<JsonObject> {
  const [converted] = await converterOf(converter).convert(conversion, [obj], groupVersion(conversion.storage));
  return converted!;
}

/** Serialized objects (storage version) in `served`'s version, in one ConversionReview. */
export async function presentConverted(
  converter: CustomResourceConverter | undefined,
  served: ServedResource,
  conversion: WebhookConversion,
  items: string[],
): Promise<string[]> {
  if (items.length === 0) return items;
  const objects = items.map((data) => JSON.parse(data) as JsonObject);
  const converted = await converterOf(converter).convert(conversion, objects, groupVersion(served));
  return converted.map(serialize);
}

/**
 * A sink that converts each event before passing it on, one at a time so that the order holds. A
 * failed conversion ends the watch (`end`, else `error` with its Status); nothing is passed on after it.
 */
export function convertingSink(
  converter: CustomResourceConverter | undefined,
  served: ServedResource,
  conversion: WebhookConversion,
  sink: WatchSink,
): WatchSink & { stop(): void; afterPending(fn: () => void): void } {
  let chain: Promise<void> = Promise.resolve();
  let ended = false;
  const end = (err: unknown) => {
    if (ended) return;
    ended = true;
    // kube-apiserver logs "Failed to encode watch event" and ends the stream, with no ERROR event.
    if (sink.end) sink.end();
    else sink.error((err instanceof ApiError ? err : internalError(err)).status);
  };
  return {
    event(type, object) {
      chain = chain.then(async () => {
        if (ended) return;
        try {
          const [converted] = await presentConverted(converter, served, conversion, [object]);
          if (!ended) sink.event(type, converted!);
        } catch (err) {
          end(err);
        }
      });
    },
    error(status) {
      chain = chain.then(() => {
        if (ended) return;
        ended = true;
        sink.error(status);
      });
    },
    stop() {
      ended = true;
    },
    afterPending(fn) {
      chain = chain.then(() => {
        if (!ended) fn();
      });
    },
  };
}
