// Type-checks the blocks of markdown files as modules of a user's project, all in one TypeScript program
// (one module per block, held in memory beside the markdown file so that "capstan" resolves through the
// workspace's node_modules as it does for the examples), and maps each error back to its markdown line.
import { existsSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import ts from "typescript";
import type { DocBlock, MarkerProblem, SourceLine } from "./blocks.ts";

/** One error, at its markdown file and 1-based line and column. */
export interface DocError {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** `TS2305` for the compiler's errors, `check:docs` for a marker the checker could not use. */
  readonly code: string;
  readonly message: string;
}

export interface CheckOptions {
  /** The workspace root: its tsconfig.base.json gives the compiler options. */
  readonly root: string;
  /**
   * How `capstan` and `capstan-dev` resolve: "source" through their `capstan-source` export condition
   * (no build needed), "built" through their dist/ type declarations, as an installed package does.
   */
  readonly against: "source" | "built";
}

interface VirtualModule {
  readonly path: string;
  readonly first: DocBlock;
  readonly lines: SourceLine[];
}

/** The module every checked block belongs to; `continued` blocks join the previous one of their file. */
function modulesOf(blocks: readonly DocBlock[], root: string, problems: MarkerProblem[]): VirtualModule[] {
  const modules: VirtualModule[] = [];
  const byPath = new Map<string, DocBlock>();
  let current: VirtualModule | undefined;
  for (const block of blocks) {
    if (block.mode === "fragment") continue;
    if (block.mode === "continued") {
      if (current === undefined || current.first.file !== block.file) {
        problems.push({
          file: block.file,
          line: block.line,
          message: "a continued block needs a checked block before it in the same file",
        });
        continue;
      }
      if (block.fileName !== undefined) {
        problems.push({
          file: block.file,
          line: block.line,
          message: "file= names the first block of a module, not a continued one",
        });
      }
      current.lines.push(...block.preamble, ...block.lines);
      continue;
    }
    const dir = dirname(resolve(root, block.file));
    const extension = block.language === "js" ? "js" : "ts";
    const path =
      block.fileName !== undefined
        ? join(dir, block.fileName)
        : join(dir, `${basename(block.file)}.${block.line}.check-docs.${extension}`);
    const clash = byPath.get(path);
    // Two pages may share a hidden module (each states what it imports) when they define it alike.
    if (clash?.hidden && block.hidden && sameLines(clash, block)) continue;
    if (clash !== undefined || existsSync(path)) {
      const where = clash !== undefined ? `${clash.file}:${clash.line} names it too` : "a real file has that name";
      problems.push({
        file: block.file,
        line: block.line,
        message: `file=${block.fileName}: ${where}; choose another name`,
      });
      if (!block.hidden) current = undefined;
      continue;
    }
    byPath.set(path, block);
    const module: VirtualModule = { path, first: block, lines: [...block.preamble, ...block.lines] };
    modules.push(module);
    // A hidden module sits between blocks of the page without ending the module they continue.
    if (!block.hidden) current = module;
  }
  return modules;
}

function sameLines(a: DocBlock, b: DocBlock): boolean {
  return a.lines.map((l) => l.text).join("\n") === b.lines.map((l) => l.text).join("\n");
}

function compilerOptions(root: string, against: CheckOptions["against"]): ts.CompilerOptions {
  const base = ts.readConfigFile(join(root, "tsconfig.base.json"), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(base.config ?? {}, ts.sys, root);
  return {
    ...parsed.options,
    noEmit: true,
    allowJs: true,
    checkJs: true,
    // A block's top-level names are its own: a block is an example to read, not a library to lint.
    noUnusedLocals: false,
    customConditions: against === "source" ? ["capstan-source"] : [],
  };
}

/**
 * Checks the blocks (already extracted, in file order) and returns every error, markers' problems first.
 * One program for all of them: the packages' types are read once, whatever the number of blocks.
 */
export function checkBlocks(blocks: readonly DocBlock[], options: CheckOptions): DocError[] {
  const problems: MarkerProblem[] = [];
  const modules = modulesOf(blocks, options.root, problems);
  const errors: DocError[] = problems.map((p) => ({
    file: p.file,
    line: p.line,
    column: 1,
    code: "check:docs",
    message: p.message,
  }));

  const texts = new Map<string, string>();
  for (const m of modules) {
    // `export {}` keeps a block without imports a module, so blocks never share top-level names.
    texts.set(m.path, `${m.lines.map((l) => l.text).join("\n")}\nexport {};\n`);
  }
  const compilerOpts = compilerOptions(options.root, options.against);
  const host = ts.createCompilerHost(compilerOpts, true);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (path) => texts.has(path) || fileExists.call(host, path);
  host.readFile = (path) => texts.get(path) ?? readFile.call(host, path);
  host.getSourceFile = (path, languageVersion, onError, shouldCreate) => {
    const text = texts.get(path);
    if (text !== undefined) return ts.createSourceFile(path, text, languageVersion, true);
    return getSourceFile.call(host, path, languageVersion, onError, shouldCreate);
  };
  const program = ts.createProgram({ rootNames: [...texts.keys()], options: compilerOpts, host });

  for (const d of program.getOptionsDiagnostics()) {
    errors.push({
      file: "tsconfig.base.json",
      line: 1,
      column: 1,
      code: `TS${d.code}`,
      message: ts.flattenDiagnosticMessageText(d.messageText, "\n"),
    });
  }
  for (const m of modules) {
    const source = program.getSourceFile(m.path);
    if (source === undefined) continue;
    const diagnostics = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
    for (const d of diagnostics) {
      const { line, character } = source.getLineAndCharacterOfPosition(d.start ?? 0);
      // Past the block's last line is the `export {}` added above: blame the block's last line.
      const at = m.lines[Math.min(line, m.lines.length - 1)] ?? { line: m.first.line, indent: 0, text: "" };
      errors.push({
        file: m.first.file,
        line: at.line,
        column: line < m.lines.length ? character + at.indent + 1 : 1,
        code: `TS${d.code}`,
        message: ts.flattenDiagnosticMessageText(d.messageText, "\n"),
      });
    }
  }
  return errors;
}
