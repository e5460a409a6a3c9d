// The simulated IPMI BMC moved to @lifeguard/testing (the end-to-end tests use it too).
export { type IpmiSimulator, type IpmiSimulatorOptions, startIpmiSimulator } from '@lifeguard/testing';
