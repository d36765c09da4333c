import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { extractBlocks } from "../../scripts/check-docs/blocks.ts";

const root = resolve(import.meta.dirname, "../..");
const fixtures = "test/docs/fixtures";
const run = promisify(execFile);
// Each check builds one TypeScript program over the packages' sources: seconds of CPU, more on a
// loaded machine.
const programTimeout = 120_000;

describe("npm run check:docs", () => {
  // One run over three pages (one TypeScript program, as `npm run check:docs` builds for all the docs):
  // a broken page, a page whose blocks compile, and a page with a fragment that would not compile.
  const pages = ["broken.md", "good.md", "fragment.md"].map((page) => `${fixtures}/${page}`);
  let exitCode: number;
  let output: string;
  let errors: string[];
  beforeAll(async () => {
    const cli = run(process.execPath, ["--import", "tsx", "scripts/check-docs.ts", ...pages], { cwd: root });
    ({ exitCode, output } = await cli.then(
      ({ stdout }) => ({ exitCode: 0, output: stdout }),
      (err: { code: number; stdout: string }) => ({ exitCode: err.code, output: err.stdout }),
    ));
    errors = output.split("\n").filter((line) => line.startsWith(fixtures));
  }, programTimeout);

  it("exits 1 on a block that does not compile, naming its markdown file, line and column", () => {
    expect(exitCode).toBe(1);
    expect(errors.filter((e) => e.startsWith(`${fixtures}/broken.md`))).toEqual([
      `${fixtures}/broken.md:7:10 TS2305: Module '"capstan/runtime"' has no exported member 'NoSuchThing'.`,
      // The block is indented two spaces in its list item: the column counts them.
      expect.stringMatching(new RegExp(`^${fixtures}/broken.md:18:37 TS2345: `)),
    ]);
    expect(output).toContain("check:docs: 2 errors.");
  });

  it("passes blocks that import each other by file=, continue a block, or use a hidden preamble or module", () => {
    expect(errors.filter((e) => e.startsWith(`${fixtures}/good.md`))).toEqual([]);
  });

  it("does not check a block marked fragment, and reports it as one", () => {
    expect(errors.filter((e) => e.startsWith(`${fixtures}/fragment.md`))).toEqual([]);
    // good.md: 5 blocks (the hidden file= module is checked but is not a block of the page); broken.md: 2.
    expect(output).toContain(
      `check:docs: 7 blocks checked, 1 fragment not checked (${fixtures}/fragment.md:3), in 3 markdown files`,
    );
  });

  it("refuses a marker it does not know rather than skip the block silently", () => {
    const { blocks, problems } = extractBlocks("page.md", "```ts fragmnet\nconst a = 1;\n```\n");
    expect(problems).toEqual([
      {
        file: "page.md",
        line: 1,
        message: 'unknown word "fragmnet" after ```ts: use fragment, continued or file=<name>',
      },
    ]);
    expect(blocks.map((b) => b.mode)).toEqual(["module"]);
  });

  it("ties a preamble to the block right after it, not to a later one", () => {
    const page = ["<!-- check:docs preamble", "declare const a: number;", "-->", "text", "```ts", "a;", "```"].join(
      "\n",
    );
    const { blocks } = extractBlocks("page.md", page);
    expect(blocks).toHaveLength(1);
    expect(blocks[0]?.preamble).toEqual([]);
  });
});
