#!/usr/bin/python3
"""A Neutron agent's side of oslo.messaging RPC, for lifeguard's provisioning-blocks tests.

Run with Debian's interpreter (python3-oslo.messaging):

    /usr/bin/python3 oslo_agent.py < spec.json

The spec (JSON on standard input):

    {"url": "rabbit://guest:guest@127.0.0.1:5672/<vhost>",
     "exchange": "neutron",
     "operations": [
        {"kind": "call" | "cast", "topic": "q-plugin", "method": "update_device_up",
         "args": {...}, "version": "1.9", "server": null, "timeout": 10,
         "call_monitor_timeout": null, "retries": 0}
     ],
     "oslo_server": null | {"topic": "q-other", "server": "other-host"},
     "rabbit_options": {"rabbit_quorum_queue": true}}

Every operation is sent with a real oslo_messaging RPCClient and its outcome printed as one JSON
list on standard output: {"ok": true, "result": ...} or {"ok": false, "error": <exception class>,
"module": <its module>, "exc_type": <RemoteError's exc_type>, "message": <first line>}.
A call that ends in MessagingTimeout is made again, as Neutron's agents retry their RPCs, up to
"retries" more times; its outcome then carries "attempts" (how many calls were made).
An argument value "$now" is replaced by the agent clock in report_state's format.

With "oslo_server", a real oslo RPC server (threading executor) with a `ping` method is started
on that topic of the same exchange before the operations run and stopped after them, to show that
oslo servers and lifeguard's server coexist on one control exchange.

"rabbit_options" are written to the [oslo_messaging_rabbit] section of a configuration file the
client reads (e.g. rabbit_quorum_queue = true, as an agent of a quorum-queue deployment has).
"""

import datetime
import json
import os
import sys
import tempfile

from oslo_config import cfg
import oslo_messaging as om


class PingEndpoint(object):
    target = om.Target(version='1.0')

    def ping(self, context, **kwargs):
        return {'pong': kwargs}


def substitute(value):
    if value == '$now':
        return datetime.datetime.utcnow().strftime('%Y-%m-%dT%H:%M:%S.%f')
    if isinstance(value, dict):
        return {key: substitute(item) for key, item in value.items()}
    if isinstance(value, list):
        return [substitute(item) for item in value]
    return value


def run(spec):
    conf = cfg.CONF
    arguments = []
    if spec.get('rabbit_options'):
        with tempfile.NamedTemporaryFile('w', suffix='.conf', delete=False) as config_file:
            config_file.write('[oslo_messaging_rabbit]\n')
            for name, value in spec['rabbit_options'].items():
                config_file.write('%s = %s\n' % (name, json.dumps(value)))
        arguments = ['--config-file', config_file.name]
    conf(arguments, project='lifeguard-test')
    if arguments:
        os.unlink(arguments[1])
    transport = om.get_rpc_transport(conf, url=spec['url'])
    exchange = spec['exchange']
    server = None
    if spec.get('oslo_server'):
        target = om.Target(exchange=exchange, topic=spec['oslo_server']['topic'],
                           server=spec['oslo_server']['server'])
        server = om.get_rpc_server(transport, target, [PingEndpoint()], executor='threading')
        server.start()
    context = {'request_id': 'req-lifeguard-test', 'is_admin': True, 'roles': []}
    results = []
    try:
        for operation in spec['operations']:
            target = om.Target(exchange=exchange, topic=operation['topic'],
                               server=operation.get('server'))
            client = om.get_rpc_client(transport, target)
            prepared = client.prepare(
                version=operation.get('version'),
                timeout=operation.get('timeout', 10),
                call_monitor_timeout=operation.get('call_monitor_timeout'))
            args = substitute(operation.get('args', {}))
            attempts = 0
            try:
                if operation['kind'] == 'call':
                    while True:
                        attempts += 1
                        try:
                            result = prepared.call(context, operation['method'], **args)
                            break
                        except om.MessagingTimeout:
                            if attempts > operation.get('retries', 0):
                                raise
                else:
                    prepared.cast(context, operation['method'], **args)
                    result = None
                outcome = {'ok': True, 'result': result}
            except om.RemoteError as error:
                outcome = {'ok': False, 'error': 'RemoteError', 'module': 'oslo_messaging',
                           'exc_type': error.exc_type, 'message': str(error).split('\n')[0]}
            except Exception as error:  # the outcome is the test's subject
                outcome = {'ok': False, 'error': type(error).__name__,
                           'module': type(error).__module__, 'exc_type': None,
                           'message': str(error).split('\n')[0]}
            # Only an operation that asked for retries reports how many calls it made.
            if 'retries' in operation:
                outcome['attempts'] = attempts
            results.append(outcome)
    finally:
        if server is not None:
            server.stop()
            server.wait()
        transport.cleanup()
    return results


if __name__ == '__main__':
    print(json.dumps(run(json.load(sys.stdin))))
    sys.stdout.flush()
    # oslo's connection heartbeat thread would hold the interpreter for seconds after cleanup().
    os._exit(0)
