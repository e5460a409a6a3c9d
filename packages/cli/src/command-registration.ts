import type { Command } from '@commander-js/extra-typings';
import type { CliContext } from './cli-context.ts';

/**
 * What a command module needs to add its commands: the `lifeguard` program (its global option
 * `--verbose`) and the context provider. program.ts imports the command modules; they import only
 * these types, never program.ts.
 */

/** The `lifeguard` program the commands are added to. */
export type LifeguardProgram = Command<[], { verbose?: true }>;

/** Gives a command its CliContext, created on first use (after the global options are parsed). */
export type ContextProvider = () => CliContext;
