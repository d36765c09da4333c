/**
 * Whether a JSON answer is pretty-printed, as kube-apiserver's `NegotiateOutputMediaType` decides it
 * (endpoints/handlers/negotiation): a `pretty=1` parameter on the Accept media type, else the `pretty`
 * query parameter read by Go's `strconv.ParseBool`, else a User-Agent of a human's tool.
 */
import type { IncomingMessage } from "node:http";

/** `strconv.ParseBool`'s true spellings; its false ones and anything unparseable are false. */
const GO_TRUE = new Set(["1", "t", "T", "TRUE", "true", "True"]);

/** The User-Agent prefixes `isPrettyPrint` takes for people: curl, Wget and browsers (not kubectl). */
const HUMAN_AGENTS = ["curl", "Wget", "Mozilla/5.0"];

export function wantsPrettyJson(req: IncomingMessage | undefined): boolean {
  if (req === undefined) return false;
  if (acceptAsksPretty(req.headers.accept)) return true;
  const url = req.url ?? "";
  const q = url.indexOf("?");
  // A non-empty `pretty` decides alone; an empty one (`?pretty`) falls through to the User-Agent.
  if (q >= 0 && url.includes("pretty", q)) {
    const value = new URLSearchParams(url.slice(q + 1)).get("pretty");
    if (value) return GO_TRUE.has(value);
  }
  const agent = req.headers["user-agent"] ?? "";
  return HUMAN_AGENTS.some((prefix) => agent.startsWith(prefix));
}

/**
 * `pretty=1` on the media range JSON is served for. Only exactly `1` counts (acceptMediaTypeOptions);
 * the first range that can be JSON is the one negotiated (endpoints/negotiation.ts).
 */
function acceptAsksPretty(accept: string | undefined): boolean {
  if (!accept?.includes("pretty")) return false;
  for (const range of accept.split(",")) {
    const [type, ...params] = range.split(";").map((s) => s.trim());
    const t = (type ?? "").toLowerCase();
    if (t !== "application/json" && t !== "application/*" && t !== "*/*") continue;
    return params.some((p) => p.replace(/\s+/g, "") === "pretty=1");
  }
  return false;
}
