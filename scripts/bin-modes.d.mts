export function makeBinsExecutable(root: string): string[];
