/**
 * The one counter of /metrics a failover moves: `tally_webhooks_total{outcome="error"}`,
 * the webhook deliveries `serve` answered 503 (docs/operations/metrics.md), summed over
 * providers — to set beside the drill's own count of the 503s it was sent.
 */
export async function webhookErrorsCounted(baseUrl: string): Promise<number | null> {
  const response = await fetch(`${baseUrl}/metrics`).catch(() => null);
  if (!response || response.status !== 200) return null;
  let total = 0;
  for (const line of (await response.text()).split('\n')) {
    if (!line.startsWith('tally_webhooks_total{') || !line.includes('outcome="error"')) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}
