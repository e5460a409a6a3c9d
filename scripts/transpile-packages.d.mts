import type ts from 'typescript';

export function compiledSource(path: string): boolean;
export function transpileOptions(root: string): ts.CompilerOptions;
export function transpilePackages(root: string): { files: number; errors: string[] };
