/**
 * Nesting-depth limits checked before a body is parsed, as Go's decoders check them while scanning:
 * a document nested deeper than MAX_NESTING_DEPTH is refused with the decoder's message instead of
 * overflowing the stack of the (recursive) parsers, merges and validators that would process it.
 * Both checks are linear scans that build nothing but a stack of counters.
 */
import { Parser } from "yaml";
import { goJsonSyntaxError, MAX_NESTING_DEPTH } from "../machinery/json-syntax-error.ts";

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;

/** True when JSON text opens more than `limit` objects or arrays at once (strings skipped). */
export function exceedsJsonDepth(text: string, limit = MAX_NESTING_DEPTH): boolean {
  // Every level takes at least one character.
  if (text.length <= limit) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** True when a value nests objects and arrays more than `limit` deep (walked without recursion). */
export function nestsDeeperThan(value: unknown, limit = MAX_NESTING_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== "object") continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** A JSON syntax error worded as Go's encoding/json words it (depth included). */
export class GoJsonSyntaxError extends Error {}

/**
 * JSON.parse behind the depth limit: malformed or too deep text throws GoJsonSyntaxError with the
 * message Go's scanner gives at the first problem (an earlier syntax error wins over the depth).
 */
export function parseJsonLimited(text: string): unknown {
  if (exceedsJsonDepth(text)) throw new GoJsonSyntaxError(goJsonSyntaxError(text));
  try {
    return JSON.parse(text);
  } catch {
    throw new GoJsonSyntaxError(goJsonSyntaxError(text));
  }
}

/**
 * How a YAML document breaks the limit, as Go's converter would report it:
 * - `yaml`: too many nested flow collections or block indentation levels, which go-yaml's scanner
 *   refuses ("yaml: line N: exceeded max depth of ..."), `line` being the 1-based line it names
 *   (undefined when the problem is on the first line, where go-yaml names none);
 * - `json`: the two kinds together (or an alias expanding into a deep place) nest deeper than the
 *   JSON decoder then accepts ("invalid character '{' exceeded max depth").
 */
export type YamlDepthProblem = { kind: "yaml"; line: number | undefined } | { kind: "json"; char: "{" | "[" };

// The CST node shapes walked here (yaml's CST types, narrowed to what the walk reads).
interface SourceToken {
  type: string;
  offset: number;
  source: string;
}
interface CstItem {
  start: SourceToken[];
  key?: CstNode | null;
  sep?: SourceToken[];
  value?: CstNode;
}
interface CstNode {
  type: string;
  offset: number;
  source?: string;
  start?: SourceToken | SourceToken[];
  items?: CstItem[];
  value?: CstNode;
}

/** One node to look at: its collection depths (block and flow) and the anchor it defines. */
interface Visit {
  node: CstNode;
  block: number;
  flow: number;
  anchor: string | undefined;
  /** Set once its children were pushed: the exit visit records the node's height under its anchor. */
  exit?: { height: number };
  parent: Visit | undefined;
}

function anchorIn(props: readonly SourceToken[] | undefined): string | undefined {
  let anchor: string | undefined;
  for (const t of props ?? []) if (t.type === "anchor") anchor = t.source.slice(1);
  return anchor;
}

function isBlock(node: CstNode): boolean {
  return node.type === "block-map" || node.type === "block-seq";
}

/**
 * Where go-yaml's scanner notices a collection: the `:` after a block map's first key, the `-` of a
 * block sequence's first entry, the opening bracket of a flow collection.
 */
function triggerOffset(node: CstNode): number {
  if (node.type === "flow-collection") return (node.start as SourceToken).offset;
  const first = node.items?.[0];
  const indicator = node.type === "block-map" ? "map-value-ind" : "seq-item-ind";
  const tokens = node.type === "block-map" ? (first?.sep ?? first?.start) : first?.start;
  return tokens?.find((t) => t.type === indicator)?.offset ?? node.offset;
}

function lineAt(text: string, offset: number): number {
  let line = 0;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** The first place (in document order) where a YAML document nests deeper than `limit`, if any. */
export function yamlDepthProblem(text: string, limit = MAX_NESTING_DEPTH): YamlDepthProblem | undefined {
  if (text.length <= limit) return undefined;
  const heights = new Map<string, { height: number; char: "{" | "[" }>();
  let jsonProblem: YamlDepthProblem | undefined;
  for (const doc of new Parser().parse(text) as Iterable<CstNode>) {
    if (doc.type !== "document" || doc.value === undefined) continue;
    const stack: Visit[] = [
      {
        node: doc.value,
        block: 0,
        flow: 0,
        anchor: anchorIn(doc.start as SourceToken[]),
        parent: undefined,
      },
    ];
    while (stack.length > 0) {
      const visit = stack.pop()!;
      const { node } = visit;
      if (visit.exit) {
        if (visit.anchor !== undefined) {
          heights.set(visit.anchor, { height: visit.exit.height, char: openerOf(node) });
        }
        if (visit.parent?.exit) visit.parent.exit.height = Math.max(visit.parent.exit.height, visit.exit.height + 1);
        continue;
      }
      const depth = visit.block + visit.flow;
      if (node.type === "alias") {
        // An alias expands into a copy of its anchor's node here.
        const anchored = heights.get((node.source ?? "").slice(1));
        if (anchored !== undefined && depth + anchored.height > limit)
          jsonProblem ??= { kind: "json", char: anchored.char };
        if (anchored !== undefined && visit.parent?.exit) {
          visit.parent.exit.height = Math.max(visit.parent.exit.height, anchored.height + 1);
        }
        continue;
      }
      if (node.items === undefined) continue;
      const block = visit.block + (isBlock(node) ? 1 : 0);
      const flow = visit.flow + (isBlock(node) ? 0 : 1);
      if (flow > limit || block > limit) {
        const line = lineAt(text, triggerOffset(node));
        return { kind: "yaml", line: line === 0 ? undefined : line + 1 };
      }
      // go-yaml reads the whole document before the JSON decoder sees it: its errors come first.
      if (block + flow > limit) jsonProblem ??= { kind: "json", char: openerOf(node) };
      visit.exit = { height: 1 };
      stack.push(visit);
      // Children in reverse, so they are visited in document order.
      for (let i = node.items.length - 1; i >= 0; i--) {
        const item = node.items[i]!;
        const valueProps = node.type === "block-seq" || item.sep === undefined ? item.start : item.sep;
        if (item.value) {
          stack.push({ node: item.value, block, flow, anchor: anchorIn(valueProps), parent: visit });
        }
        if (item.key) stack.push({ node: item.key, block, flow, anchor: anchorIn(item.start), parent: visit });
      }
    }
  }
  return jsonProblem;
}

/** The JSON bracket the collection becomes. */
function openerOf(node: CstNode): "{" | "[" {
  if (node.type === "block-seq") return "[";
  return node.type === "flow-collection" && (node.start as SourceToken).source === "[" ? "[" : "{";
}
