import { computeContract } from '../../openstack/test/compute-contract.ts';
import { cloudSimTarget } from './support/cloud-sim-target.ts';

// The contract suite against cloud-sim: the same assertions as against real Nova.
computeContract(() => cloudSimTarget());
