import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { ConfigError, WHOLE_FILE_KEY } from '../errors.ts';

/** What the usual errors of reading a file mean, in words. */
const FILE_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EISDIR: 'a directory, not a file',
  ENOTDIR: 'a part of the path is not a directory',
};

/**
 * Reads a YAML file as a plain mapping.
 * @param options.required when false (default true), a missing file gives `null` instead of an error
 * @param options.pointedBy the setting that named the file (`FENCING_CONFIG_PATH`): a problem with the
 *   whole file is then reported under that key, `FENCING_CONFIG_PATH (/etc/fencing.yaml): cannot read
 *   file: ENOENT (no such file)`, so the operator knows what to change; without it, under the path alone
 * @returns the parsed top-level mapping, or null when the file is missing and not required
 * @throws ConfigError when the file is unreadable, is not valid YAML (the message gives line and
 *   column), or its top level is not a mapping
 */
export function readYamlMapping(
  path: string,
  options: { required?: boolean; pointedBy?: string } = {},
): Record<string, unknown> | null {
  const key = options.pointedBy ?? WHOLE_FILE_KEY;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && options.required === false) return null;
    throw new ConfigError([
      {
        key,
        source: path,
        problem: `cannot read file: ${code ?? String(error)}${code && FILE_ERRORS[code] ? ` (${FILE_ERRORS[code]})` : ''}`,
        value: null,
      },
    ]);
  }
  let document: unknown;
  try {
    document = parseYaml(text, { prettyErrors: true, uniqueKeys: true });
  } catch (error) {
    const message = String((error as Error).message).split('\n')[0];
    throw new ConfigError([{ key, source: path, problem: `not valid YAML: ${message}`, value: null }]);
  }
  if (document === null || document === undefined) return {};
  if (typeof document !== 'object' || Array.isArray(document)) {
    throw new ConfigError([{ key, source: path, problem: 'the top level must be a mapping', value: null }]);
  }
  return document as Record<string, unknown>;
}
