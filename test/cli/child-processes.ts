import { readdirSync, readFileSync } from "node:fs";

/** Whether process `pid` exists (a zombie not yet reaped counts). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The pids of `pid`'s child processes: `capstan dev`'s operator child and its standby. Read from
 * /proc, so Linux only: elsewhere none are found, and the checks that use it check nothing.
 */
export function childrenOf(pid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((e) => /^\d+$/.test(e));
  } catch {
    return [];
  }
  return entries.map(Number).filter((child) => {
    try {
      // /proc/<pid>/stat is "pid (comm) state ppid ...", and comm may hold spaces: read after its ")".
      const stat = readFileSync(`/proc/${child}/stat`, "utf8");
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid;
    } catch {
      return false;
    }
  });
}
