import { serverMetadataContract } from './server-metadata-contract.ts';
import { realNovaTarget } from './support/real-nova-target.ts';

// Nova's server metadata API against real Nova (test/harness/real-nova): what cloud-sim must match.
serverMetadataContract(async () => realNovaTarget());
