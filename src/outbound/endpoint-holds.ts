/**
 * A disabled endpoint's open deliveries wait: their next_attempt_at moves to 'infinity',
 * past the end of the claim's ordered walk, so a backlog behind a disabled endpoint costs
 * the claim nothing; enabling it makes them due now. (The claim also skips disabled
 * endpoints outright: a delivery enqueued while the endpoint was being disabled is never
 * sent to it.) Spliced into the statements that disable and enable: `endpoint` is the SQL
 * of the endpoint's id, `held` a boolean SQL expression, true when it is disabled, `from`
 * what they read from.
 */
export function holdDeliveriesSql(endpoint: string, held: string, from?: string): string {
  return `update outbound_deliveries d
          set next_attempt_at = case when ${held} then 'infinity'::timestamptz else now() end
          ${from ? `from ${from}` : ''}
          where d.endpoint_id = ${endpoint} and d.state in ('pending', 'failed', 'delivering')
            and (d.next_attempt_at = 'infinity') <> (${held})`;
}
