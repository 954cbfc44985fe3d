// Redis and PostgreSQL for `npm run bench:peers`: the Debian packages' binaries, each started
// on loopback with its data in a fresh temporary directory, and stopped (data deleted) after.
import { execFileSync, spawn } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

const INSTALL = "install them with: sudo apt-get install -y redis-server postgresql";

function which(name) {
  for (const dir of (process.env.PATH ?? "").split(":")) if (dir && existsSync(path.join(dir, name))) return path.join(dir, name);
  return null;
}

/** postgresBin: the newest /usr/lib/postgresql/<version>/bin (Debian's layout; initdb is not on PATH there). */
function postgresBin() {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(path.join(root, v, "bin", "initdb"))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(root, versions[0], "bin") : null;
}

/** requireServers fails early, with the command to fix it, when either server is missing. */
export function requireServers() {
  const redis = which("redis-server");
  const pg = postgresBin();
  const missing = [!redis && "redis-server", !pg && "PostgreSQL (initdb, pg_ctl)"].filter(Boolean);
  if (missing.length) throw new Error(`bench:peers needs ${missing.join(" and ")}; ${INSTALL}`);
  return { redis, pg };
}

async function waitForPort(port, what) {
  for (let i = 0; i < 100; i++) {
    const open = await new Promise((resolve) => {
      const s = net.connect(port, "127.0.0.1", () => (s.end(), resolve(true)));
      s.on("error", () => resolve(false));
    });
    if (open) return;
    await sleep(100);
  }
  throw new Error(`${what} did not listen on 127.0.0.1:${port} within 10 s`);
}

/**
 * startRedis: durability as BullMQ's docs advise for production — append-only file,
 * fsync every second, never evict keys.
 */
export async function startRedis(bin, port) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "edgequeue-peers-redis-"));
  const child = spawn(bin, ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--maxmemory-policy", "noeviction"], {
    stdio: "ignore",
  });
  await waitForPort(port, "redis-server");
  return {
    settings: "appendonly yes, appendfsync everysec, maxmemory-policy noeviction",
    stop: async () => {
      child.kill("SIGTERM");
      for (let i = 0; i < 50 && child.exitCode === null; i++) await sleep(100);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * startPostgres: a throwaway cluster with the default (durable) settings — fsync and
 * synchronous_commit on. PostgreSQL refuses to run as root, so as root it runs as the
 * Debian package's `postgres` user.
 */
export async function startPostgres(bin, port) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "edgequeue-peers-pg-"));
  const asRoot = process.getuid?.() === 0;
  const run = (cmd, args) => {
    const [file, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", path.join(bin, cmd), ...args]] : [path.join(bin, cmd), args];
    return execFileSync(file, argv, { stdio: ["ignore", "pipe", "pipe"] });
  };
  if (asRoot) {
    const { uid, gid } = userIds("postgres");
    chownSync(dir, uid, gid);
  }
  const data = path.join(dir, "data");
  run("initdb", ["-D", data, "-A", "trust", "-U", "bench", "--no-sync"]);
  run("pg_ctl", ["-D", data, "-l", path.join(dir, "log"), "-w", "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=100`, "start"]);
  await waitForPort(port, "postgres");
  return {
    settings: "defaults (fsync on, synchronous_commit on)",
    connection: { host: "127.0.0.1", port, user: "bench", database: "postgres" },
    stop: async () => {
      try {
        run("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

function userIds(name) {
  const uid = Number(execFileSync("id", ["-u", name]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", name]).toString().trim());
  return { uid, gid };
}
