import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { connect as connectTls } from 'node:tls';
import { startPrivateRabbitmq, stopProcessGroup } from './private-rabbitmq.ts';
import { closedPort } from './redis-server.ts';
import { waitFor } from './wait-for.ts';

/** PEM files made by makeTestCertificates: a CA, a server certificate for 127.0.0.1/localhost, a client one. */
export interface TestCertificates {
  readonly ca: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
}

function openssl(directory: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: directory, stdio: 'ignore' });
}

/**
 * Makes a throw-away CA (RSA 2048, valid 2 days) and two certificates it signs, with the machine's
 * `openssl`: a server certificate for IP 127.0.0.1 and DNS localhost, and a client certificate (CN
 * `lifeguard`). Files are written into `directory`.
 * @throws Error when openssl fails
 */
export function makeTestCertificates(directory: string): TestCertificates {
  const path = (name: string) => join(directory, name);
  openssl(
    directory,
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=lifeguard test CA',
    '-keyout',
    'ca-key.pem',
    '-out',
    'ca.pem',
  );
  const sign = (name: string, subject: string, extensions: string) => {
    writeFileSync(path(`${name}.ext`), extensions);
    openssl(
      directory,
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      subject,
      '-keyout',
      `${name}-key.pem`,
      '-out',
      `${name}.csr`,
    );
    openssl(
      directory,
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca-key.pem',
      '-CAcreateserial',
      '-days',
      '2',
      '-out',
      `${name}.pem`,
      '-extfile',
      `${name}.ext`,
    );
  };
  sign('server', '/CN=localhost', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  sign('client', '/CN=lifeguard', 'extendedKeyUsage=clientAuth\n');
  return {
    ca: path('ca.pem'),
    serverCert: path('server.pem'),
    serverKey: path('server-key.pem'),
    clientCert: path('client.pem'),
    clientKey: path('client-key.pem'),
  };
}

/** A broker of a test's own, listening only with TLS on 127.0.0.1. */
export interface TlsBroker {
  readonly port: number;
  /** Stops the broker's processes (the process group this helper started). */
  stop(): Promise<void>;
}

/** Resolves when a TLS handshake with the client certificate succeeds on `port`. */
function handshake(port: number, certificates: TestCertificates): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTls({
      host: '127.0.0.1',
      port,
      ca: readFileSync(certificates.ca),
      cert: readFileSync(certificates.clientCert),
      key: readFileSync(certificates.clientKey),
    });
    socket.once('secureConnect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid, 'SIGKILL');
  await exited;
}

async function started(
  name: string,
  child: ChildProcess,
  port: number,
  certificates: TestCertificates,
  timeoutMilliseconds: number,
): Promise<void> {
  try {
    await waitFor(
      `${name} with TLS on port ${port}`,
      async () => {
        if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
        return handshake(port, certificates);
      },
      timeoutMilliseconds,
    );
  } catch (error) {
    await stopGroup(child);
    throw error;
  }
}

/**
 * Starts a redis-server of the test's own with TLS only (`--port 0 --tls-port`), client certificates
 * required (`tls-auth-clients yes`), the `default` user off and one ACL user `user` with
 * `password` and every right (an ACL file next to the CA).
 * @throws Error when it does not accept a TLS handshake within 15 s
 */
export async function startTlsRedis(
  certificates: TestCertificates,
  user: string,
  password: string,
): Promise<TlsBroker> {
  const port = await closedPort();
  const aclFile = join(dirname(certificates.ca), `redis-${port}.acl`);
  writeFileSync(aclFile, `user default off\nuser ${user} on >${password} ~* &* +@all\n`);
  const child = spawn(
    'redis-server',
    [
      '--port',
      '0',
      '--tls-port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--tls-cert-file',
      certificates.serverCert,
      '--tls-key-file',
      certificates.serverKey,
      '--tls-ca-cert-file',
      certificates.ca,
      '--tls-auth-clients',
      'yes',
      '--aclfile',
      aclFile,
    ],
    { stdio: 'ignore', detached: true },
  );
  await started('redis-server', child, port, certificates, 15_000);
  return { port, stop: () => stopGroup(child) };
}

/**
 * Starts a RabbitMQ node of the test's own (`lgtls<port>@localhost`, its own config, data, log and
 * plugins files under `directory`, no plugins) with only a TLS listener on 127.0.0.1 that requires a
 * client certificate (`verify_peer`, `fail_if_no_peer_cert`). It shares epmd and the Erlang
 * distribution with the machine's node under another node name and distribution port.
 * @throws Error when it does not accept a TLS handshake within 120 s
 */
export async function startTlsRabbitmq(
  certificates: TestCertificates,
  directory: string,
): Promise<TlsBroker> {
  const port = await closedPort();
  const groupId = await startPrivateRabbitmq(
    {
      nodeName: `lgtls${port}@localhost`,
      directory,
      nodePort: await closedPort(),
      distributionPort: await closedPort(),
      configLines: [
        'listeners.tcp = none',
        `listeners.ssl.default = 127.0.0.1:${port}`,
        `ssl_options.cacertfile = ${certificates.ca}`,
        `ssl_options.certfile = ${certificates.serverCert}`,
        `ssl_options.keyfile = ${certificates.serverKey}`,
        'ssl_options.verify = verify_peer',
        'ssl_options.fail_if_no_peer_cert = true',
      ],
      plugins: [],
    },
    () => handshake(port, certificates),
  );
  return { port, stop: () => stopProcessGroup(groupId) };
}
