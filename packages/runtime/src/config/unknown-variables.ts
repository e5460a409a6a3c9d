import { likelyMeant } from './likely-meant.ts';

/**
 * The environment variables one family of lifeguard programs owns: every variable under its prefixes
 * is one of `known`, so any other under them is a mistake (a misspelling, a name from another release).
 * A family that shares a prefix (the Masakari API and engine, `LIFEGUARD_MASAKARI_`) lists the names
 * of all its programs, since a launcher gives each program the others' variables too.
 */
export interface OwnVariables {
  /** e.g. `LIFEGUARD_MASAKARI_`; a prefix no other program's variables start with. */
  readonly prefixes: ReadonlyArray<string>;
  /** Every variable under the prefixes that a program of the family reads. */
  readonly known: ReadonlyArray<string>;
}

/**
 * The OwnVariables of a family whose variables are the keys of configuration schemas (zod objects):
 * the keys under `prefixes`, so the schemas' other keys (shared ones such as LIFEGUARD_JOB_LOCK_SECONDS)
 * are left to their own checks.
 */
export function ownVariablesOf(
  prefixes: ReadonlyArray<string>,
  ...schemas: ReadonlyArray<{ readonly shape: Readonly<Record<string, unknown>> }>
): OwnVariables {
  return {
    prefixes,
    known: schemas
      .flatMap((schema) => Object.keys(schema.shape))
      .filter((name) => prefixes.some((prefix) => name.startsWith(prefix))),
  };
}

/** A set variable under a family's prefix that none of its programs reads. */
export interface UnknownVariable {
  readonly variable: string;
  /** The known variable it most likely misspells (likelyMeant), or null when none is close. */
  readonly meant: string | null;
  /** Why it is named, naming the variable meant or, when none is close, the family's variables. */
  readonly problem: string;
}

/**
 * The variables of `env` under one of the family's prefixes that it does not read, by name: each is
 * ignored, so the setting meant keeps its default. Unset variables are left out. Pure.
 */
export function unknownVariables(
  env: Readonly<Record<string, string | undefined>>,
  own: OwnVariables,
): UnknownVariable[] {
  const known = new Set(own.known);
  return Object.keys(env)
    .filter((name) => env[name] !== undefined && !known.has(name))
    .filter((name) => own.prefixes.some((prefix) => name.startsWith(prefix)))
    .sort()
    .map((variable) => {
      const meant = likelyMeant(variable, own.known);
      const problem =
        meant === null
          ? `not a variable lifeguard reads, and ignored; the ${own.prefixes.map((prefix) => `${prefix}*`).join(' and ')} variables are ${[...own.known].sort().join(', ')}`
          : `not a variable lifeguard reads, and ignored: did you mean ${meant}? ${meant} keeps the value it has without it`;
      return { variable, meant, problem };
    });
}
