import { generate } from 'selfsigned';

let cached: Promise<{ key: string; cert: string }> | null = null;

/**
 * A self-signed certificate for the simulated BMCs (`CN=cloud-sim-bmc`, SAN localhost and 127.0.0.1),
 * generated once per process. fence_redfish talks HTTPS only; run it with `--ssl-insecure`.
 */
export function selfSignedCertificate(): Promise<{ key: string; cert: string }> {
  cached ??= generate([{ name: 'commonName', value: 'cloud-sim-bmc' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  }).then((pems) => ({ key: pems.private, cert: pems.cert }));
  return cached;
}
