// test-file: runs alone (restarts the fault suite's own RabbitMQ, which every other fault file uses)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '@lifeguard/testing';
import {
  COMPUTE_HOST,
  DHCP_HOST,
  type OsloOutcome,
  rabbitUrl,
  runOsloAgent,
  seedBlockedPorts,
  serviceProcessSuite,
} from '../../packages/provisioning-blocks/test/support.ts';
import { recordFaultRow } from './support/fault-table.ts';
import { metricTotal, whenMetricExceeds } from './support/metrics.ts';
import { CompletionRecorder, countCompletions } from './support/provisioning-events.ts';
import { restartSuiteRabbitmq } from './support/suite-engines.ts';

const PORTS = 10_000;
const DHCP_PORTS_PER_CALL = 100;
const L2_DEVICES_PER_CALL = 50;
const L2_AGENTS = 4;
/** Seconds an agent waits for a reply before its call fails with MessagingTimeout and is made again. */
const CALL_TIMEOUT_SECONDS = 30;
const CALL_RETRIES = 10;

/**
 * RabbitMQ restarted (`rabbitmqctl stop`, then started on its data) while real oslo.messaging agents
 * complete 10,000 ports (docs/failure-modes.md#brokers): the service's consumers and its oslo RPC
 * server come back by themselves, the agents' calls that were in flight (one at least, seen waiting in
 * RabbitMQ before the restart) are answered once it is back or time out and their retries
 * succeed, and every port ends ACTIVE with one provisioning.complete id.
 */
describe('RabbitMQ restarted mid provisioning stream', () => {
  const suite = serviceProcessSuite('fault-rabbit-pb');

  it(`${PORTS} ports completed by oslo.messaging calls across a RabbitMQ restart: every port ACTIVE, no completion lost or doubled, calls in flight answered or retried`, async (t) => {
    const prefix = suite.keyPrefix('fault-rabbit-pb');
    const { stores, ids } = await seedBlockedPorts(suite.redis, prefix, PORTS, 60);
    const recorder = await CompletionRecorder.start(suite.vhost.url, 'fault.rabbit-pb.completions');
    const service = suite.start({
      LIFEGUARD_AMQP_URL: suite.vhost.url,
      LIFEGUARD_REDIS_KEY_PREFIX: prefix,
      LIFEGUARD_INSTANCE_NAME: 'fault-rabbit-pb',
      LIFEGUARD_PROVISIONING_RPC_SERVER: 'fault-rabbit-host',
      LIFEGUARD_PROVISIONING_NOTIFY_NOVA_ON_PORT_STATUS_CHANGES: 'false',
      LIFEGUARD_PROVISIONING_OUTBOX_CLAIM_IDLE_SECONDS: '2',
    });
    const metricsPort = await service.started(300_000);

    const call = (method: string, version: string, args: Record<string, unknown>) => ({
      kind: 'call',
      topic: 'q-plugin',
      method,
      version,
      args,
      timeout: CALL_TIMEOUT_SECONDS,
      retries: CALL_RETRIES,
    });
    const dhcpCalls: Array<Record<string, unknown>> = [];
    for (let start = 0; start < ids.length; start += DHCP_PORTS_PER_CALL) {
      dhcpCalls.push(
        call('dhcp_ready_on_ports', '1.5', { port_ids: ids.slice(start, start + DHCP_PORTS_PER_CALL) }),
      );
    }
    const l2Calls: Array<Array<Record<string, unknown>>> = Array.from({ length: L2_AGENTS }, () => []);
    for (let start = 0, index = 0; start < ids.length; start += L2_DEVICES_PER_CALL, index++) {
      l2Calls[index % L2_AGENTS]!.push(
        call('update_device_list', '1.5', {
          devices_up: ids.slice(start, start + L2_DEVICES_PER_CALL),
          devices_down: [],
          agent_id: `ovs-agent-${index % L2_AGENTS}`,
          host: COMPUTE_HOST,
        }),
      );
    }
    const url = rabbitUrl(suite.vhost.url);
    const agentTimeout = 3_600_000;
    const agents: Array<Promise<OsloOutcome[]>> = [
      runOsloAgent({ url, exchange: 'neutron', operations: dhcpCalls }, agentTimeout),
      ...l2Calls.map((operations) => runOsloAgent({ url, exchange: 'neutron', operations }, agentTimeout)),
    ];
    // Restart once a tenth of the agents' calls are answered, with the service's answers held back
    // (SIGSTOP) until RabbitMQ is back and a call seen waiting in RabbitMQ first: a call is then in
    // flight at the restart, whatever the machine's speed. (Without the hold, a quiet machine answered
    // every call before RabbitMQ had stopped.) Such a call is either answered once RabbitMQ is back
    // (when its request survived and the agent's reply queue was declared again in time) or times out
    // and is made again; which one is a race inside the agent, so both count, and no call may fail.
    const calls = dhcpCalls.length + l2Calls.reduce((sum, operations) => sum + operations.length, 0);
    await whenMetricExceeds(metricsPort, 'lifeguard_provisioning_rpc_requests_total', calls / 10, 1_200_000);
    service.child.kill('SIGSTOP');
    await waitFor(
      'a call waiting for the held service in RabbitMQ',
      async () => ((await suite.vhost.get<{ messages?: number }>('queues/q-plugin')).messages ?? 0) > 0,
      30_000,
      200,
    );
    let restart: Awaited<ReturnType<typeof restartSuiteRabbitmq>>;
    try {
      restart = await restartSuiteRabbitmq({ how: 'stop' });
    } finally {
      service.child.kill('SIGCONT');
    }
    const publishedAtRestart =
      (await metricTotal(metricsPort, 'lifeguard_provisioning_outbox_published_total')) ?? 0;
    const resumedAt = await whenMetricExceeds(
      metricsPort,
      'lifeguard_provisioning_outbox_published_total',
      publishedAtRestart,
      600_000,
    );
    t.diagnostic(`RabbitMQ was down ${(restart.answeringAt - restart.stoppedAt) / 1000} s`);

    const outcomes = (await Promise.all(agents)).flat();
    const failedCalls = outcomes.filter((outcome) => !outcome.ok);
    const retriedCalls = outcomes.filter((outcome) => (outcome.attempts ?? 1) > 1).length;
    await waitFor(
      'every port ACTIVE',
      async () => {
        const statuses = await Promise.all(ids.map((id) => suite.redis.hget(stores.keys.port(id), 'status')));
        return statuses.every((status) => status === '"ACTIVE"');
      },
      300_000,
      1000,
    );
    await waitFor(
      'the outbox drained',
      async () => (await suite.redis.xlen(stores.keys.outbox)) === 0,
      120_000,
    );
    const counted = countCompletions(ids, await recorder.drain());
    recordFaultRow({
      fault: 'RabbitMQ restarted mid provisioning stream',
      inFlight: `${PORTS} ports, ${outcomes.length} oslo calls from ${L2_AGENTS} L2 agents and 1 DHCP agent (${DHCP_HOST})`,
      eventsLost: counted.lost,
      duplicateEffects: counted.duplicated,
      secondsToResume: resumedAt === null ? null : (resumedAt - restart.answeringAt) / 1000,
      outcome: `a call in flight at the restart; ${retriedCalls} call(s) timed out and succeeded on retry, the others answered; log "AMQP connection lost; reconnecting"`,
    });
    assert.deepEqual(failedCalls, [], 'calls that failed after their retries');
    assert.ok(
      service.lines.some((line) => line.msg === 'AMQP connection lost; reconnecting'),
      'the service logged the lost connection',
    );
    assert.equal(service.child.exitCode, null, 'the service kept running');
    assert.equal(counted.lost, 0, 'ports without a provisioning.complete event');
    assert.equal(counted.duplicated, 0, 'ports completed twice under different event ids');
    service.child.kill('SIGTERM');
    assert.equal((await service.exited()).code, 0);
  });
});
