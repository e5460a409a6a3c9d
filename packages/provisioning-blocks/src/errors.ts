/**
 * An object type the block store does not know. As Neutron's `RuntimeError` from
 * provisioning_blocks when no model is registered for a resource type (docs/neutron-provisioning-rules.md#resource-types): register the
 * type with `BlockStore.registerObjectType` first.
 */
export class UnregisteredObjectTypeError extends Error {
  constructor(readonly objectType: string) {
    super(
      `no record is registered for object type "${objectType}"; register it with registerObjectType before using provisioning blocks on it`,
    );
    this.name = 'UnregisteredObjectTypeError';
  }
}

/** A record was changed by someone else between our read and our write too many times in a row. */
export class ConcurrentUpdateError extends Error {
  constructor(
    readonly objectType: string,
    readonly objectId: string,
    readonly attempts: number,
  ) {
    super(`${objectType} ${objectId} kept changing under us; gave up after ${attempts} attempts`);
    this.name = 'ConcurrentUpdateError';
  }
}

/**
 * An RPC endpoint method refused its input (wrong argument types, an unparseable `time`, ...). For a
 * call, the caller gets an oslo failure reply of class `exceptionClass` from module `exceptionModule`
 * (`builtins` exceptions are re-raised as themselves by a Python client); a cast is dead-lettered.
 */
export class RpcMethodError extends Error {
  constructor(
    message: string,
    readonly exceptionClass = 'ValueError',
    readonly exceptionModule = 'builtins',
  ) {
    super(message);
    this.name = 'RpcMethodError';
  }
}

/** The Nova notification could not be delivered after every retry. */
export class NovaNotificationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NovaNotificationError';
  }
}
