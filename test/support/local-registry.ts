/**
 * A local npm registry for the packaging tests: it serves the packed `capstan` and `capstan-dev`
 * tarballs under their names and versions, as the public registry will once they are published, and
 * passes every other request through to the public registry. A project installed through it depends
 * on version ranges (`"capstan": "^0.2.0"`), exactly as a user's does; nothing points into the
 * checkout.
 *
 * Use it by setting `npm_config_registry` to `url` in the environment of the npm commands.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

const UPSTREAM = "https://registry.npmjs.org";

export interface LocalRegistry {
  /** `http://127.0.0.1:<port>/`. */
  url: string;
  /** Names of the packages served from tarballs, with their versions. */
  packages: Record<string, string>;
  close(): Promise<void>;
}

interface Served {
  manifest: Record<string, unknown> & { name: string; version: string };
  tarball: Buffer;
}

/** Starts the registry serving `tarballs` (paths of `npm pack` outputs). */
export async function startLocalRegistry(tarballs: string[]): Promise<LocalRegistry> {
  const served = new Map<string, Served>();
  for (const path of tarballs) {
    const tarball = readFileSync(path);
    const manifest = packageJsonOf(tarball);
    served.set(manifest.name, { manifest, tarball });
  }
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(String(err));
    });
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    const tarballMatch = /^\/(.+)\/-\/[^/]+\.tgz$/.exec(path);
    const own = served.get(tarballMatch ? tarballMatch[1]! : path.slice(1));
    if (own && tarballMatch) {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": own.tarball.length });
      res.end(own.tarball);
      return;
    }
    if (own) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(packument(own, base)));
      return;
    }
    const upstream = await fetch(`${UPSTREAM}${req.url ?? "/"}`, {
      headers: req.headers.accept ? { accept: req.headers.accept } : {},
    });
    const body = Buffer.from(await upstream.arrayBuffer());
    res.writeHead(upstream.status, {
      "content-type": upstream.headers.get("content-type") ?? "application/octet-stream",
      "content-length": body.length,
    });
    res.end(body);
  }
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url: base,
    packages: Object.fromEntries([...served].map(([name, s]) => [name, s.manifest.version])),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The registry document of one package: its one version, with the tarball's URL and integrity. */
function packument({ manifest, tarball }: Served, base: string): Record<string, unknown> {
  const file = `${manifest.name}-${manifest.version}.tgz`;
  return {
    name: manifest.name,
    "dist-tags": { latest: manifest.version },
    versions: {
      [manifest.version]: {
        ...manifest,
        _id: `${manifest.name}@${manifest.version}`,
        dist: {
          tarball: `${base}${manifest.name}/-/${file}`,
          shasum: createHash("sha1").update(tarball).digest("hex"),
          integrity: `sha512-${createHash("sha512").update(tarball).digest("base64")}`,
        },
      },
    },
  };
}

/** package/package.json out of a gzipped tar (512-byte headers, contents padded to 512). */
function packageJsonOf(tgz: Buffer): Served["manifest"] {
  const tar = gunzipSync(tgz);
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const name = tar
      .subarray(offset, offset + 100)
      .toString("utf8")
      .replace(/\0.*$/s, "");
    if (name === "") break;
    const size = Number.parseInt(
      tar
        .subarray(offset + 124, offset + 136)
        .toString("utf8")
        .replace(/\0.*$/s, ""),
      8,
    );
    if (name === "package/package.json") {
      return JSON.parse(tar.subarray(offset + 512, offset + 512 + size).toString("utf8")) as Served["manifest"];
    }
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  throw new Error("the tarball has no package/package.json");
}
