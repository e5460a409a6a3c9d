import {
  AGENT_RPC_METHODS,
  type AgentRpcEndpoint,
  type AgentRpcMethod,
  type DhcpReadyOnPortsArgs,
  PLUGIN_TOPIC_ENDPOINTS,
  REPORTS_TOPIC_ENDPOINTS,
  type ReportStateArgs,
  type UpdateDeviceDownArgs,
  type UpdateDeviceListArgs,
  type UpdateDeviceUpArgs,
} from '@lifeguard/contracts';
import { z } from 'zod';
import type { AgentCallbacks } from '../ml2/agent-callbacks.ts';
import { ALREADY_HANDLED, type RpcEndpoint, type RpcMethod, type RpcTopic } from './oslo-dispatcher.ts';

/** The RPC methods of Neutron's agent API that this service implements, on AgentCallbacks. */
export function neutronRpcMethods(callbacks: AgentCallbacks): Record<AgentRpcMethod, RpcMethod> {
  return {
    update_device_up: {
      args: AGENT_RPC_METHODS.update_device_up.args,
      recordsHandled: true,
      handler: async (args: UpdateDeviceUpArgs, { requestId, handled }) =>
        (await callbacks.updateDeviceUp(args, requestId, handled)).outcome === 'duplicate'
          ? ALREADY_HANDLED
          : null,
    },
    update_device_down: {
      args: AGENT_RPC_METHODS.update_device_down.args,
      handler: async (args: UpdateDeviceDownArgs) => (await callbacks.updateDeviceDown(args)).result,
    },
    update_device_list: {
      args: AGENT_RPC_METHODS.update_device_list.args,
      handler: (args: UpdateDeviceListArgs, { requestId, handledPart }) =>
        callbacks.updateDeviceList(args, requestId, handledPart),
    },
    dhcp_ready_on_ports: {
      args: AGENT_RPC_METHODS.dhcp_ready_on_ports.args,
      recordsHandled: true,
      handler: async (args: DhcpReadyOnPortsArgs, { requestId, handled }) =>
        (await callbacks.dhcpReadyOnPorts(args.port_ids, requestId, handled)).duplicate
          ? ALREADY_HANDLED
          : null,
    },
    report_state: {
      // `time` is checked by the method itself, so a bad one fails as Python's strptime: ValueError.
      args: AGENT_RPC_METHODS.report_state.args.extend({ time: z.string() }),
      handler: (args: ReportStateArgs) => callbacks.reportState(args.agent_state.agent_state, args.time),
    },
    // Neutron's answer: the server is up (it is answering).
    has_alive_neutron_server: {
      args: AGENT_RPC_METHODS.has_alive_neutron_server.args,
      handler: async () => true,
    },
  };
}

function implement(
  endpoints: ReadonlyArray<AgentRpcEndpoint>,
  methods: Record<AgentRpcMethod, RpcMethod>,
): RpcEndpoint[] {
  return endpoints.map((endpoint) => ({
    name: endpoint.name,
    version: endpoint.version,
    namespace: endpoint.namespace,
    methods: new Map(endpoint.methods.map((name) => [name, methods[name]])),
  }));
}

/**
 * Neutron's two agent topics with the endpoints neutron-server serves on them (docs/neutron-provisioning-rules.md#agent-topics):
 * the plugin topic (ML2 RpcCallbacks 1.9, DhcpRpcCallback 1.10, AgentExtRpcCallback 1.4) and the
 * reports topic (AgentExtRpcCallback 1.4).
 */
export function neutronRpcTopics(
  callbacks: AgentCallbacks,
  topics: { pluginTopic: string; reportsTopic: string },
): RpcTopic[] {
  const methods = neutronRpcMethods(callbacks);
  return [
    { topic: topics.pluginTopic, endpoints: implement(PLUGIN_TOPIC_ENDPOINTS, methods) },
    { topic: topics.reportsTopic, endpoints: implement(REPORTS_TOPIC_ENDPOINTS, methods) },
  ];
}
