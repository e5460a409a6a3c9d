import { serverMetadataContract } from '../../openstack/test/server-metadata-contract.ts';
import { cloudSimTarget } from './support/cloud-sim-target.ts';

// Nova's server metadata API over HTTP against cloud-sim: the same assertions as against real Nova.
serverMetadataContract(() => cloudSimTarget());
