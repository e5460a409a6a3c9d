"""Validates request bodies with Masakari's own validator and schemas (Debian's python3-masakari).

Reads a JSON list of {"schema": <name>, "body": <value>} on stdin and writes a JSON list of
Masakari's messages (null when the body is valid).
"""
import json
import sys

from masakari import exception
from masakari.api.openstack.ha.schemas import hosts, notifications, payload, segments
from masakari.api.validation.validators import _SchemaValidator

SCHEMAS = {
    'segment-create-1.0': segments.create,
    'segment-create-1.2': segments.create_v12,
    'segment-update-1.0': segments.update,
    'segment-update-1.2': segments.update_v12,
    'host-create': hosts.create,
    'host-update': hosts.update,
    'notification-create': notifications.create,
    'payload-COMPUTE_HOST': payload.create_compute_host_payload,
    'payload-PROCESS': payload.create_process_payload,
    'payload-VM': payload.create_vm_payload,
}


def check(name, body):
    try:
        _SchemaValidator(SCHEMAS[name]).validate(body)
        return None
    except exception.ValidationError as error:
        return error.format_message()


print(json.dumps([check(case['schema'], case['body']) for case in json.load(sys.stdin)]))
