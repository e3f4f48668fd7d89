import { amount, type Check } from './check.js';

export const holdCapturedAndReleased: Check = {
  class: 'hold_captured_and_released',
  covers: 'settlements',
  sql: `select s.job_id::text as key, jsonb_build_object('job_id', s.job_id) as objects,
               jsonb_build_object('settlements', jsonb_agg(s.settlement_key order by s.settlement_key)) as detail
        from settlements s where s.charge_type in ('capture', 'release')
        group by s.job_id having count(distinct s.charge_type) > 1`,
};

export const holdOpenPastExpiry: Check = {
  class: 'hold_open_past_expiry',
  covers: 'holds',
  sql: `select h.job_id::text as key, jsonb_build_object('job_id', h.job_id, 'wallet_id', h.wallet_id) as objects,
               jsonb_build_object('amount', ${amount('h.amount')}, 'expires_at', h.expires_at) as detail
        from holds h where h.resolved_by is null and h.expires_at < now()`,
};
