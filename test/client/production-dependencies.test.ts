/**
 * The production package stays off @kubernetes/client-node: importing it costs ~70-120 MB of RSS and a
 * second or more of start-up, for what the client does itself (kubeconfig users, exec and oidc
 * credentials). Inside the workspace the import would still resolve (capstan-dev depends on it), so only
 * this check catches a new one.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../../packages/capstan");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

describe("the capstan package", () => {
  it("neither depends on nor imports @kubernetes/client-node", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<string, Record<string, string>>;
    for (const field of ["dependencies", "peerDependencies", "optionalDependencies"]) {
      expect(Object.keys(pkg[field] ?? {})).not.toContain("@kubernetes/client-node");
    }
    const files = sources(join(root, "src"));
    expect(files.length).toBeGreaterThan(10);
    const importing = files.filter((f) =>
      /from\s+["']@kubernetes\/client-node|import\(\s*["']@kubernetes\/client-node/.test(readFileSync(f, "utf8")),
    );
    expect(importing).toEqual([]);
  });
});
