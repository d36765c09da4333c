// The TypeScript blocks of one markdown file, with what `npm run check:docs` needs to check them and to
// point an error at the markdown line it comes from. The convention (README.md, "Code blocks in the
// docs"):
//   ```ts                 a module of its own, type-checked against the public entry points
//   ```ts continued       appended to the previous checked block of the same file: one module
//   ```ts file=widget.ts  also importable by the file's other blocks as "./widget.ts"
//   ```ts fragment        not checked (counted and reported as a fragment)
//   <!-- check:docs preamble
//   declare const op: Operator;
//   -->                   code the reader does not see, put before the next block (imports,
//                         `declare`d names the block uses but does not define)
//   <!-- check:docs file=operator.ts
//   export { default, ExchangeRate } from "../examples/exchangerate/operator.ts";
//   -->                   a module the reader does not see, for a block's `import ... from "./operator.ts"`

/** The languages whose blocks are checked; `js` blocks are checked as JavaScript with checkJs. */
const languages: Record<string, "ts" | "js"> = { ts: "ts", typescript: "ts", js: "js", javascript: "js" };

/** Where a line of a block came from: its 1-based line in the markdown file and the indentation removed. */
export interface SourceLine {
  readonly text: string;
  readonly line: number;
  readonly indent: number;
}

/** One fenced block of TypeScript or JavaScript, or a hidden preamble before it. */
export interface DocBlock {
  /** The markdown file, as given (relative paths stay relative: they are what errors print). */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly language: "ts" | "js";
  readonly mode: "module" | "continued" | "fragment";
  /** `file=<name>`: the block's module is `<markdown dir>/<name>`, importable by the file's other blocks. */
  readonly fileName: string | undefined;
  /** A `<!-- check:docs file=... -->` module: checked, but not a block of the page (not counted). */
  readonly hidden: boolean;
  /** The `<!-- check:docs preamble ... -->` lines before the block, if any. */
  readonly preamble: readonly SourceLine[];
  readonly lines: readonly SourceLine[];
}

/** A marker that could not be understood: reported as an error, so a typo does not silently skip a block. */
export interface MarkerProblem {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

/** A `file=` name: a file in the markdown's folder, importable as "./<name>". */
const fileNamePattern = /^[\w.-]+\.(ts|js)$/;
const fence = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)(.*)$/;
const preambleStart = /^\s*<!--\s*check:docs\b(.*)$/;

/** Reads every fenced block of a checked language from markdown text, in order. */
export function extractBlocks(file: string, text: string): { blocks: DocBlock[]; problems: MarkerProblem[] } {
  const lines = text.split(/\r?\n/);
  const blocks: DocBlock[] = [];
  const problems: MarkerProblem[] = [];
  let preamble: SourceLine[] | undefined;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] ?? "";
    const comment = preambleStart.exec(text);
    if (comment !== null) {
      const [directive = "", ...rest] = (comment[1] ?? "").trim().split(/\s+/);
      const collected: SourceLine[] = [];
      let end = i;
      let closed = false;
      for (let j = i; j < lines.length; j++) {
        end = j;
        const body = j === i ? (rest.join(" ") ?? "") : (lines[j] ?? "");
        const close = body.indexOf("-->");
        const code = close === -1 ? body : body.slice(0, close);
        if (j > i || code.trim() !== "") collected.push({ text: code, line: j + 1, indent: 0 });
        if (close !== -1) {
          closed = true;
          break;
        }
      }
      const name = directive.replace("-->", "");
      if (!closed) {
        problems.push({ file, line: i + 1, message: "a check:docs comment is closed with -->" });
      } else if (name === "preamble") {
        preamble = collected;
      } else if (name.startsWith("file=") && fileNamePattern.test(name.slice("file=".length))) {
        const fileName = name.slice("file=".length);
        const language = fileName.endsWith(".js") ? "js" : "ts";
        blocks.push({
          file,
          line: i + 1,
          language,
          mode: "module",
          fileName,
          hidden: true,
          preamble: [],
          lines: collected,
        });
      } else {
        problems.push({
          file,
          line: i + 1,
          message: `unknown check:docs comment "${name}": use <!-- check:docs preamble ... --> or <!-- check:docs file=<name>.ts ... -->`,
        });
      }
      i = end;
      continue;
    }
    const open = fence.exec(text);
    if (open === null) {
      if (text.trim() !== "") preamble = undefined; // a preamble belongs to the block right after it
      continue;
    }
    const indent = open[1]?.length ?? 0;
    const marker = open[2] ?? "```";
    const closing = new RegExp(`^\\s*${marker[0] === "`" ? "`" : "~"}{${marker.length},}\\s*$`);
    const body: SourceLine[] = [];
    let j = i + 1;
    for (; j < lines.length && !closing.test(lines[j] ?? ""); j++) {
      const raw = lines[j] ?? "";
      const strip = Math.min(indent, raw.length - raw.trimStart().length);
      body.push({ text: raw.slice(strip), line: j + 1, indent: strip });
    }
    const language = languages[(open[3] ?? "").toLowerCase()];
    if (language !== undefined) {
      const words = (open[4] ?? "").trim().split(/\s+/).filter(Boolean);
      let mode: DocBlock["mode"] = "module";
      let fileName: string | undefined;
      for (const word of words) {
        if (word === "fragment" || word === "continued") mode = word;
        else if (word.startsWith("file=")) fileName = word.slice("file=".length);
        else
          problems.push({
            file,
            line: i + 1,
            message: `unknown word "${word}" after \`\`\`${open[3]}: use fragment, continued or file=<name>`,
          });
      }
      if (fileName !== undefined && !fileNamePattern.test(fileName)) {
        problems.push({
          file,
          line: i + 1,
          message: `file=${fileName}: a file name in the markdown's folder, ending in .ts or .js`,
        });
        fileName = undefined;
      }
      blocks.push({
        file,
        line: i + 1,
        language,
        mode,
        fileName,
        hidden: false,
        preamble: preamble ?? [],
        lines: body,
      });
    }
    preamble = undefined;
    i = j;
  }
  return { blocks, problems };
}
