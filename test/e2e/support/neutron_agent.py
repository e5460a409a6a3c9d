#!/usr/bin/python3
"""Neutron agents' side of the agent RPC, spoken through Neutron's own client classes.

Run with Debian's interpreter (python3-neutron, python3-oslo.messaging):

    /usr/bin/python3 neutron_agent.py <transport_url>

It is what a real DHCP agent and a real Open vSwitch agent send to the Neutron server, built with the
same objects those agents build (neutron_lib.rpc.get_client under them, oslo.messaging over
RabbitMQ, control exchange "neutron"):

- neutron.agent.rpc.PluginReportStateAPI(topics.REPORTS).report_state(...)   (both agents)
- neutron.agent.dhcp.agent.DhcpPluginApi(topics.PLUGIN, host).dhcp_ready_on_ports(port_ids)
- neutron.agent.rpc.PluginApi(topics.PLUGIN).update_device_list(devices_up=..., agent_id, host)

Commands arrive as JSON lines on standard input; each gets one JSON line on standard output:

    {"op": "report_state", "agent": "dhcp" | "ovs", "host": "network-1"}
    {"op": "dhcp_ready", "host": "network-1", "ports": ["<port id>", ...]}
    {"op": "device_up", "host": "compute1", "ports": ["<port id>", ...]}
    {"op": "exit"}

    -> {"op": ..., "ok": true, "result": ...}
    -> {"op": ..., "ok": false, "error": "<exception class>", "message": "<first line>"}
"""

import json
import os
import sys

from oslo_config import cfg
import oslo_messaging

from neutron_lib.agent import topics
from neutron_lib import constants
from neutron_lib import context as neutron_context
from neutron_lib import rpc as n_rpc

from neutron.agent.dhcp.agent import DhcpPluginApi
from neutron.agent import rpc as agent_rpc
from neutron.conf.agent import common as agent_config
from neutron.conf.agent.database import agents_db


AGENTS = {
    'dhcp': {
        'binary': constants.AGENT_PROCESS_DHCP,
        'agent_type': constants.AGENT_TYPE_DHCP,
        'topic': topics.DHCP_AGENT,
        'configurations': {'dhcp_driver': 'neutron.agent.linux.dhcp.Dnsmasq', 'networks': 1},
    },
    'ovs': {
        'binary': constants.AGENT_PROCESS_OVS,
        'agent_type': constants.AGENT_TYPE_OVS,
        'topic': 'N/A',
        'configurations': {'bridge_mappings': {}, 'tunnel_types': [], 'devices': 0},
    },
}


def configure(transport_url):
    conf = cfg.CONF
    agent_config.register_agent_state_opts_helper(conf)
    conf.register_opts(agents_db.AGENT_OPTS)
    conf([], project='neutron')
    # As neutron.common.config does for every Neutron process.
    oslo_messaging.set_transport_defaults(control_exchange='neutron')
    # A first transport registers oslo.messaging's options on conf, as in any service.
    oslo_messaging.get_rpc_transport(conf, url=transport_url).cleanup()
    conf.set_override('transport_url', transport_url)
    conf.set_override('report_interval', 10, group='AGENT')
    n_rpc.init(conf)


def main():
    configure(sys.argv[1])
    state_api = agent_rpc.PluginReportStateAPI(topics.REPORTS)
    plugin_api = agent_rpc.PluginApi(topics.PLUGIN)
    started = set()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        command = json.loads(line)
        op = command.get('op')
        if op == 'exit':
            break
        try:
            context = neutron_context.get_admin_context_without_session()
            if op == 'report_state':
                kind = command['agent']
                state = dict(AGENTS[kind], host=command['host'])
                key = (kind, command['host'])
                if key not in started:
                    state['start_flag'] = True
                    started.add(key)
                result = state_api.report_state(context, state, use_call=True)
            elif op == 'dhcp_ready':
                result = DhcpPluginApi(topics.PLUGIN, command['host']).dhcp_ready_on_ports(command['ports'])
            elif op == 'device_up':
                host = command['host']
                result = plugin_api.update_device_list(
                    context, command['ports'], [], 'ovs-agent-%s' % host, host)
            else:
                raise ValueError('unknown op %r' % op)
            answer = {'op': op, 'ok': True, 'result': result}
        except Exception as error:  # the caller judges the outcome
            answer = {'op': op, 'ok': False, 'error': type(error).__name__,
                      'message': str(error).split('\n')[0]}
        sys.stdout.write(json.dumps(answer, default=str) + '\n')
        sys.stdout.flush()
    n_rpc.cleanup()
    sys.stdout.flush()
    # oslo's heartbeat thread would hold the interpreter for seconds after cleanup().
    os._exit(0)


if __name__ == '__main__':
    main()
