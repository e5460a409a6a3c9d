import { computeContract } from './compute-contract.ts';
import { realNovaTarget } from './support/real-nova-target.ts';

// The contract suite against real Nova (test/harness/real-nova, started by `npm test`).
computeContract(async () => realNovaTarget());
