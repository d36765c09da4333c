/**
 * Runs a Dockerfile's stages without Docker, for tests on machines with no engine: each stage is an
 * empty directory standing for the image's filesystem; `COPY` copies from the build context (minus
 * what `.dockerignore` excludes) or from an earlier stage, `RUN` runs its command with `sh -c` in the
 * stage's `WORKDIR` with the stage's `ENV`, and the final stage's `ENTRYPOINT` + `CMD` is returned
 * for the caller to start. The base image is this machine's Node, which must be the image's major
 * (checked for `node:<major>...` images), so what is checked is the Dockerfile's own logic: what each
 * stage copies, runs and leaves behind. `ARG`s before the first `FROM` take their default or the
 * `buildArgs` given (as `docker build --build-arg`), and `${NAME}` in a `FROM` is replaced by them.
 * Each stage's npm has a cache of its own, empty at the start (`/root/.npm` in the stage's folder),
 * as a stage built from the base image has: npm answers a lock file's `file:` tarball from its
 * cache by integrity even when the file is gone, so a shared cache would hide a tarball the stage
 * never copied in.
 *
 * Caveats: only the instructions Capstan generates are understood (ARG before FROM, FROM ... AS, WORKDIR, COPY
 * [--from] [--chown], RUN, ENV, USER, EXPOSE, ENTRYPOINT, CMD in exec form); anything else throws.
 */
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { promisify } from "node:util";

export interface Stage {
  name: string | undefined;
  base: string;
  /** The directory standing for the stage's root filesystem. */
  root: string;
  workdir: string;
  env: Record<string, string>;
  user: string | undefined;
  entrypoint: string[];
  cmd: string[];
  expose: string[];
}

export interface DockerfileRun {
  stages: Stage[];
  final: Stage;
  /** The final stage's working directory on this machine. */
  finalDir: string;
  /** ENTRYPOINT followed by CMD. */
  command: string[];
}

const run = promisify(execFile);

/**
 * Runs `dockerfile` with `context` as the build context, each stage under `into/<index>`. Commands run
 * asynchronously: a registry or server the caller hosts in this process must keep answering.
 */
export async function runDockerfile(
  dockerfile: string,
  context: string,
  into: string,
  env: NodeJS.ProcessEnv = process.env,
  buildArgs: Record<string, string> = {},
): Promise<DockerfileRun> {
  const ignore = dockerignore(context);
  const stages: Stage[] = [];
  const globalArgs = new Map<string, string>();
  let stage: Stage | undefined;
  for (const { instruction, args } of instructions(dockerfile)) {
    if (instruction === "ARG") {
      const m = /^([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?$/.exec(args);
      if (!m || stage) throw new Error(`ARG ${args}: only NAME[=default] before the first FROM is understood`);
      const value = buildArgs[m[1]!] ?? m[2];
      if (value === undefined) throw new Error(`ARG ${m[1]} has no default and no build argument`);
      globalArgs.set(m[1]!, value);
      continue;
    }
    if (instruction === "FROM") {
      const from = args.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
        const value = globalArgs.get(name);
        if (value === undefined) throw new Error(`FROM ${args}: no ARG ${name} before it`);
        return value;
      });
      const [base, as, name] = from.split(/\s+/);
      if (!base || (as !== undefined && (as.toUpperCase() !== "AS" || !name))) throw new Error(`FROM ${args}`);
      checkNodeMajor(base);
      const root = join(into, String(stages.length));
      mkdirSync(root, { recursive: true });
      stage = { name, base, root, workdir: "/", env: {}, user: undefined, entrypoint: [], cmd: [], expose: [] };
      stages.push(stage);
      continue;
    }
    if (!stage) throw new Error(`${instruction} before FROM`);
    const current: Stage = stage;
    const inStage = (path: string) => join(current.root, path.startsWith("/") ? path : join(current.workdir, path));
    switch (instruction) {
      case "WORKDIR":
        current.workdir = args.startsWith("/") ? args : join(current.workdir, args);
        mkdirSync(inStage("."), { recursive: true });
        break;
      case "ENV": {
        const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(args);
        if (!m) throw new Error(`ENV ${args}: only KEY=value is understood`);
        current.env[m[1]!] = m[2]!;
        break;
      }
      case "USER":
        current.user = args;
        break;
      case "EXPOSE":
        current.expose.push(...args.split(/\s+/));
        break;
      case "ENTRYPOINT":
        current.entrypoint = JSON.parse(args) as string[];
        break;
      case "CMD":
        current.cmd = JSON.parse(args) as string[];
        break;
      case "RUN":
        try {
          await run("sh", ["-c", args], {
            cwd: inStage("."),
            env: { ...env, npm_config_cache: join(current.root, "root/.npm"), ...current.env },
            maxBuffer: 64 << 20,
          });
        } catch (err) {
          const { stdout, stderr } = err as { stdout?: string; stderr?: string };
          throw new Error(`RUN ${args} failed in stage ${stages.length - 1}:\n${stdout ?? ""}\n${stderr ?? ""}`, {
            cause: err,
          });
        }
        break;
      case "COPY": {
        const words = args.split(/\s+/);
        let from: Stage | undefined;
        while (words[0]?.startsWith("--")) {
          const flag = words.shift()!;
          if (flag.startsWith("--from=")) {
            const ref = flag.slice("--from=".length);
            from = stages.find((s) => s.name === ref) ?? stages[Number(ref)];
            if (!from) throw new Error(`COPY ${flag}: no such stage`);
          } else if (!flag.startsWith("--chown=")) throw new Error(`COPY ${flag} is not understood`);
        }
        const dest = words.pop();
        if (!dest || words.length === 0) throw new Error(`COPY ${args}`);
        const source = from;
        for (const src of words) {
          const origin = source
            ? join(source.root, src.startsWith("/") ? src : join(source.workdir, src))
            : join(context, src);
          if (!existsSync(origin))
            throw new Error(`COPY ${src}: not found in ${source ? `stage ${source.name}` : "the context"}`);
          const target =
            dest.endsWith("/") || words.length > 1 ? join(inStage(dest), src.split("/").pop()!) : inStage(dest);
          const isDir = statSync(origin).isDirectory();
          const to = isDir && (src === "." || src === "./") ? inStage(dest) : target;
          mkdirSync(isDir ? to : dirname(to), { recursive: true });
          cpSync(origin, to, {
            recursive: true,
            verbatimSymlinks: true,
            filter: (path) => source !== undefined || !ignore(relative(context, path)),
          });
        }
        break;
      }
      default:
        throw new Error(`the Dockerfile instruction ${instruction} is not understood here`);
    }
  }
  const final = stages.at(-1);
  if (!final) throw new Error("the Dockerfile has no FROM");
  return {
    stages,
    final,
    finalDir: join(final.root, final.workdir),
    command: [...final.entrypoint, ...final.cmd],
  };
}

/** This machine's Node stands in for the image's: a `node:<major>` image of another major would test another Node. */
function checkNodeMajor(base: string): void {
  const image = /^(?:docker\.io\/(?:library\/)?)?node:(\d+)/.exec(base)?.[1];
  const machine = process.versions.node.split(".")[0];
  if (image !== undefined && image !== machine) {
    throw new Error(
      `FROM ${base} is Node ${image}, but this machine runs Node ${machine}, which stands in for the image`,
    );
  }
}

/** Instructions with their arguments; comments and blank lines dropped, `\` continuations joined. */
function instructions(text: string): { instruction: string; args: string }[] {
  const out: { instruction: string; args: string }[] = [];
  const lines = text.replace(/\\\n/g, " ").split("\n");
  for (const raw of lines) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const m = /^(\S+)\s+(.*)$/.exec(line);
    if (!m) throw new Error(`cannot read Dockerfile line: ${line}`);
    out.push({ instruction: m[1]!.toUpperCase(), args: m[2]!.trim() });
  }
  return out;
}

/**
 * A predicate for context paths `.dockerignore` excludes. Understood: plain paths and `*`
 * globs, anchored at the context root, `**` for any depth, and `!` exceptions.
 */
function dockerignore(context: string): (path: string) => boolean {
  const file = join(context, ".dockerignore");
  if (!existsSync(file)) return () => false;
  const rules = readFileSync(file, "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => {
      const negate = l.startsWith("!");
      const pattern = (negate ? l.slice(1) : l).replace(/^\/+|\/+$/g, "");
      const source = pattern
        .split("/")
        .map((part) =>
          part === "**"
            ? ".*"
            : part
                .replace(/[.+^${}()|[\]\\]/g, "\\$&")
                .replace(/\*/g, "[^/]*")
                .replace(/\?/g, "[^/]"),
        )
        .join("/");
      return { negate, re: new RegExp(`^${source}(/.*)?$`) };
    });
  return (path) => {
    if (path === "") return false;
    let excluded = false;
    for (const rule of rules) if (rule.re.test(path)) excluded = !rule.negate;
    return excluded;
  };
}

/** Every file under `dir`, relative to it (for assertions on what a stage holds). */
export function listFiles(dir: string, skip: (path: string) => boolean = () => false): string[] {
  const out: string[] = [];
  const walk = (sub: string) => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const path = sub === "" ? entry.name : `${sub}/${entry.name}`;
      if (skip(path)) continue;
      if (entry.isDirectory()) walk(path);
      else out.push(path);
    }
  };
  walk("");
  return out;
}
