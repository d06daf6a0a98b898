/**
 * Where `orbit` and its control socket are, as orbit-common's `Locations`
 * says: `$ORBIT_CONFIG_DIR/run` when set, else `$XDG_RUNTIME_DIR/orbit`,
 * else `<config dir>/orbit/run`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export type Env = Readonly<Record<string, string | undefined>>;

/** The control socket of the user's Orbit. */
export function controlSocket(env: Env, platform: NodeJS.Platform = process.platform): string {
  const configDir = env.ORBIT_CONFIG_DIR;
  if (configDir) return path.join(configDir, 'run', 'control.sock');
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime) return path.join(runtime, 'orbit', 'control.sock');
  const home = env.HOME ?? os.homedir();
  const config =
    platform === 'darwin'
      ? path.join(home, 'Library', 'Application Support')
      : (env.XDG_CONFIG_HOME ?? path.join(home, '.config'));
  return path.join(config, 'orbit', 'run', 'control.sock');
}

/**
 * The `orbit` program: `orbit.path` when set (it must exist and be
 * executable), else the first `orbit` on `PATH`. A clear error otherwise.
 */
export function findOrbit(setting: string, env: Env, exists: (file: string) => boolean = isExecutable): string {
  if (setting.trim() !== '') {
    if (!path.isAbsolute(setting)) throw new Error(`orbit.path must be an absolute path (it is "${setting}")`);
    if (!exists(setting)) throw new Error(`orbit.path names "${setting}", which is not an executable file`);
    return setting;
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, 'orbit');
    if (exists(candidate)) return candidate;
  }
  throw new Error('Orbit was not found: install it on PATH, or set orbit.path to the orbit program');
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
