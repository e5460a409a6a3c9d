import { formatAge } from '@lifeguard/operator-views';
import type { VNode } from 'preact';
import type { ProvisioningView } from '../readers/provisioning.ts';
import type { Seen } from '../readers/seen.ts';
import { html } from './html.ts';
import { badge, mainSection, table, whenSeen } from './layout.ts';

function provisioningView(view: ProvisioningView, now: Date): VNode {
  const statuses = Object.entries(view.portsByStatus).sort(([a], [b]) => a.localeCompare(b));
  return html`<div>
    <div class="cards">
      <section class="card" id="outbox">
        <h2>Outbox</h2>
        <p>${view.outbox.depth} event(s) not yet published; oldest waiting ${view.outbox.lagSeconds.toFixed(1)} s</p>
      </section>
      <section class="card" id="port-statuses">
        <h2>Ports by status</h2>
        <p>
          ${statuses.length === 0 ? 'no port recorded' : statuses.map(([status, count]) => html`<span class="count">${badge(status, status === 'ACTIVE' ? 'ok' : 'warn')} ${count}</span> `)}
        </p>
        ${view.portsRead < view.portsTotal ? html`<p class="muted">the first ${view.portsRead} of ${view.portsTotal} ports</p>` : null}
      </section>
    </div>
    <h2>Ports with provisioning blocks (${view.blockedPorts.length})</h2>
    ${
      view.blockedPorts.length === 0
        ? html`<p class="muted">no port is waiting for a provisioning block</p>`
        : table(
            ['port', 'status', 'binding:host_id', 'device_owner', 'blocked by'],
            view.blockedPorts.map((port) => [
              port.portId,
              port.status,
              port.host,
              port.deviceOwner,
              port.blocks.join(', '),
            ]),
            'blocked-ports',
          )
    }
    <h2>Agents (${view.agents.length})</h2>
    ${table(
      ['host', 'agent_type', 'binary', 'alive', 'admin_state_up', 'last heartbeat'],
      view.agents.map((agent) => [
        agent.host,
        agent.agent_type,
        agent.binary,
        agent.alive ? badge('alive', 'ok') : badge('dead', 'bad'),
        String(agent.admin_state_up),
        formatAge(agent.heartbeat_timestamp, now),
      ]),
      'agents',
    )}
  </div>`;
}

/** The provisioning page: ports by status, the blocks left on each port and their entities, agents, the outbox. */
export function provisioningPage(view: Seen<ProvisioningView>, now: Date = new Date()): VNode {
  return mainSection(
    'Provisioning',
    whenSeen(view, 'the provisioning records', (value) => provisioningView(value, now)),
  );
}
