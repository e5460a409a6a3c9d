/** A poll cycle (or a step of one) needed the leader lease and this node monitor does not hold it. */
export class NotLeaderError extends Error {
  constructor() {
    super('this node monitor does not hold the leader lease');
    this.name = 'NotLeaderError';
  }
}
