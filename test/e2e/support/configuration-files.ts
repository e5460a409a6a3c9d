import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One fencing.yaml entry: InstanceHA's keys (agent, ipaddr, ipport, login, passwd, ...). */
export type FencingEntry = Readonly<
  Record<string, string | number | Readonly<Record<string, string | number>>>
>;

/** The operator's files of a deployment, in a private temporary directory (mode 0700). */
export class ConfigurationFiles {
  readonly directory = mkdtempSync(join(tmpdir(), 'lifeguard-e2e-'));

  /** Writes InstanceHA's config.yaml with these keys under `config:`; returns its path. */
  configYaml(keys: Readonly<Record<string, string | number | boolean>>): string {
    const lines = Object.entries(keys).map(([key, value]) => `  ${key}: ${JSON.stringify(String(value))}`);
    return this.write('config.yaml', `config:\n${lines.join('\n')}\n`);
  }

  /** Writes fencing.yaml (`FencingConfig:` host → entry); returns its path. */
  fencingYaml(entries: Readonly<Record<string, FencingEntry>>): string {
    return this.write('fencing.yaml', `${JSON.stringify({ FencingConfig: entries }, null, 2)}\n`);
  }

  /** Writes clouds.yaml with one cloud; returns its path. */
  cloudsYaml(name: string, entry: unknown): string {
    return this.write('clouds.yaml', `${JSON.stringify({ clouds: { [name]: entry } }, null, 2)}\n`);
  }

  write(name: string, text: string): string {
    const path = join(this.directory, name);
    writeFileSync(path, text, { mode: 0o600 });
    return path;
  }

  remove(): void {
    rmSync(this.directory, { recursive: true, force: true });
  }
}
