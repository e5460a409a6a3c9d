import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { redactUrl } from '@lifeguard/runtime';
import type { Stack } from './stack.ts';

function table(rows: ReadonlyArray<ReadonlyArray<string>>, indent = '  '): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, index) => {
      widths[index] = Math.max(widths[index] ?? 0, cell.length);
    });
  }
  return rows
    .map(
      (row) =>
        indent +
        row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index]!))).join('  '),
    )
    .join('\n');
}

/** A path relative to the working directory when it is inside it, else absolute. */
function shown(path: string, workingDirectory: string): string {
  const relativePath = relative(workingDirectory, path);
  return relativePath.startsWith('..') ? path : relativePath;
}

/**
 * What the operator reads once the stack is ready: where each worker's health and metrics are,
 * cloud-sim's URLs, the brokers, the files written, and what to try next (with the lifeguard CLI when
 * it is installed in the checkout, else with curl against cloud-sim's control API).
 */
export function describeStack(stack: Stack, workingDirectory = process.cwd()): string {
  const { options, files, cloudSim, layout } = stack;
  const lines: string[] = [];
  const seconds = (stack.startupMilliseconds / 1000).toFixed(1);
  if (cloudSim && layout) {
    const servers = cloudSim.model.servers.size;
    lines.push(
      `lifeguard is running against a simulated cloud (${layout.hosts.length} compute hosts, ${servers} servers), ready in ${seconds} s.`,
    );
  } else if (options.cloud.kind === 'openstack') {
    lines.push(`lifeguard is running against the cloud "${options.cloud.cloudName}", ready in ${seconds} s.`);
  }
  lines.push('', 'Workers (health, readiness, metrics):');
  lines.push(
    table(
      stack.workers.map((worker) => [
        worker.name,
        `pid ${worker.pid}`,
        `${worker.baseUrl}/healthz  /readyz  /metrics`,
      ]),
    ),
  );
  const masakari = masakariApiEndpoint(stack.workers, options.httpHost);
  if (masakari)
    lines.push('', `Masakari API: ${masakari}   (openstack segment|notification ...: README, Try it)`);
  if (cloudSim && layout) lines.push(...cloudSimSection(cloudSim, layout));
  lines.push(
    '',
    'Brokers:',
    table([
      ['RabbitMQ', redactUrl(options.amqpUrl)],
      ['Redis', `${redactUrl(options.redisUrl)}   (key prefix ${options.keyPrefix})`],
    ]),
  );
  lines.push(...filesSection(files, workingDirectory));
  lines.push(...trySection(stack, workingDirectory));
  lines.push('', 'Stop everything with Ctrl-C.');
  return lines.join('\n');
}

/**
 * The v1 endpoint of the stack's Masakari API worker, or null when the stack runs none or its port is
 * chosen by the system (0: not known here). An address that listens everywhere is shown as loopback.
 */
export function masakariApiEndpoint(
  workers: ReadonlyArray<{
    readonly options: { readonly definition: { readonly kind: string }; readonly env: NodeJS.ProcessEnv };
  }>,
  httpHost: string,
): string | null {
  const worker = workers.find((each) => each.options.definition.kind === 'masakari-api');
  const port = Number(worker?.options.env.LIFEGUARD_MASAKARI_API_PORT ?? 0);
  if (!Number.isInteger(port) || port <= 0) return null;
  const host = httpHost === '0.0.0.0' || httpHost === '::' ? '127.0.0.1' : httpHost;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`;
}

/** cloud-sim's URLs and the layout of the simulated cloud: protected, unprotected and reserved hosts. */
function cloudSimSection(
  cloudSim: NonNullable<Stack['cloudSim']>,
  layout: NonNullable<Stack['layout']>,
): string[] {
  const lines: string[] = [];
  const urls = cloudSim.urls;
  lines.push('', 'cloud-sim (the simulated cloud, in this process):');
  lines.push(
    table([
      ['Nova', urls.compute],
      ['Glance', urls.image],
      ['Keystone', urls.identity],
      ['control', `${urls.control}   (GET ${urls.control}/state lists the hosts)`],
      ['Redfish BMCs', `${urls.redfish}/redfish/v1/Systems/<host>   (credentials in fencing.yaml)`],
    ]),
  );
  lines.push(
    '',
    `  ${layout.protectedHosts[0]}..${layout.protectedHosts.at(-1)} are protected (aggregate ha-compute, evacuable=true, instanceha:max_failures=3)`,
  );
  if (layout.unprotectedHosts.length > 0)
    lines.push(`  ${layout.unprotectedHosts.join(', ')} are in the untagged aggregate general: never fenced`);
  if (layout.reservedHosts.length > 0)
    lines.push(
      `  ${layout.reservedHosts.join(', ')} are reserved spares (disabled, enabled when a host fails)`,
    );
  lines.push('  servers web-NN and db-NN are evacuable (flavor ha.small / image cirros-ha), batch-NN is not');
  return lines;
}

/** The files the stack wrote, relative to the working directory when inside it. */
function filesSection(files: Stack['files'], workingDirectory: string): string[] {
  const lines: string[] = [];
  lines.push('', `Files (${shown(files.directory, workingDirectory)}):`);
  lines.push(
    table(
      [
        files.cloudsYaml ? ['clouds.yaml', shown(files.cloudsYaml, workingDirectory)] : null,
        ['config.yaml', shown(files.configYaml, workingDirectory)],
        ['fencing.yaml', shown(files.fencingYaml, workingDirectory)],
        ['env', `${shown(files.environmentFile, workingDirectory)}   (variables for the lifeguard CLI)`],
        ['stack.json', shown(files.manifest, workingDirectory)],
      ].filter((row): row is string[] => row !== null),
    ),
  );
  return lines;
}

/** What to try next: the lifeguard CLI when it is installed in the checkout, else curl against cloud-sim. */
function trySection(stack: Stack, workingDirectory: string): string[] {
  const { options, files, cloudSim, layout } = stack;
  const lines: string[] = [];
  const environment = shown(files.environmentFile, workingDirectory);
  const cliInstalled = existsSync(join(options.repositoryRoot, 'packages', 'cli', 'package.json'));
  const victim = layout?.protectedHosts[Math.min(2, layout.protectedHosts.length - 1)];
  lines.push('', 'Try, in another terminal in this directory:', `  source ${environment}`);
  const tries: string[][] = [];
  if (cliInstalled) {
    tries.push(['npx lifeguard status', '# workers, leader, queues, incidents']);
    tries.push(['npx lifeguard hosts', '# every compute service as Nova and lifeguard see it']);
    if (cloudSim && victim) {
      tries.push([
        `npx lifeguard sim kill-host ${victim} --watch`,
        '# nova-compute dies: fenced, evacuated, re-enabled',
      ]);
      tries.push(['npx lifeguard incidents', '# then: npx lifeguard incident <id>']);
      tries.push(['npx lifeguard sim partition 6', '# more than THRESHOLD at once: nothing is fenced']);
      tries.push(['npx lifeguard sim heal', '']);
    }
  } else if (cloudSim && victim) {
    const control = cloudSim.urls.control;
    tries.push([`curl -s ${control}/state | jq`, '']);
    tries.push([`curl -s -X POST ${control}/hosts/${victim}/kill`, '# watch it fenced and evacuated']);
  }
  if (tries.length > 0) lines.push(table(tries).replace(/ +$/gm, ''));
  return lines;
}
