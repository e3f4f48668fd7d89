/** The pure posting module: grants, shares, draws and every movement of a wallet's money (docs/ARCHITECTURE.md, funds/; the contract's "Credit grants"). */
export { post, replay, type Replayed } from './posting.js';
export { availableAt, canFund, drawDownOrder, fundableGrants, isExpiredAt, unheld, walletTotals } from './order.js';
export * from './types.js';
export { availableDelta, projectionDelta, spendDelta, walletDelta, type EntryShape, type ProjectionDelta, type WalletChange } from './entry-effects.js';
export { fundingByGrant, type GrantFunding } from './job-funding.js';
