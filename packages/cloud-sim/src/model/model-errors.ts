/** A host name the simulated cloud does not have; nothing was changed. */
export class UnknownHostError extends Error {
  constructor(
    readonly hosts: ReadonlyArray<string>,
    message = `unknown hosts: ${hosts.join(', ')}`,
  ) {
    super(message);
    this.name = 'UnknownHostError';
  }
}

/** A flavor id the simulated cloud does not have; no server was added. */
export class UnknownFlavorError extends Error {
  constructor(readonly flavorId: string) {
    super(`no flavor with id ${flavorId} (flavors: see GET /flavors)`);
    this.name = 'UnknownFlavorError';
  }
}
