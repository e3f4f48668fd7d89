import { ConsoleApiError } from '../api.js';
import { html } from '../html.js';
import { page, pager, when } from '../layout.js';
import type { PageHandler } from '../page-handler.js';
import { pageQuery, type List } from './tenants.js';

interface DeadEvent {
  id?: string;
  provider: string;
  event_key: string;
  job_id: string;
  type: string;
  attempts: number;
  last_error?: string | null;
  error_code?: string | null;
  received_at: string;
  processed_at?: string | null;
}

export const deadLettersPage: PageHandler = async ({ api, request, context }) => {
  const query = request.query as Record<string, string | undefined>;
  const { params, direction } = pageQuery(query);
  params.set('state', 'dead');
  const events = await api.get<List<DeadEvent>>(`/v1/events?${params}`);
  const notice =
    query.done === 'retried'
      ? 'The event is queued again; a worker settles it next.'
      : query.done === 'discarded'
        ? 'The event is discarded.'
        : null;
  const action = (e: DeadEvent, verb: string) =>
    `/console/dead-letters/${encodeURIComponent(e.provider)}/${encodeURIComponent(e.event_key)}/${verb}`;
  return page(
    'Dead letters',
    context,
    html`${notice ? html`<div class="notice">${notice}</div>` : ''}
      <p class="muted">
        Events whose settlement failed every attempt. Retry one once its cause is fixed; discard one whose error is permanent (its hold is
        then released by the normal keyed paths).
      </p>
      <table>
        <thead>
          <tr>
            <th>Event</th>
            <th>Job</th>
            <th>Attempts</th>
            <th>Last error</th>
            <th>Actions</th>
          </tr>
        </thead>
        <tbody>
          ${events.data.map(
            (e) =>
              html`<tr>
                <td>
                  <strong>${e.type}</strong><br /><code>${e.event_key}</code><br /><small
                    >${e.provider}, received ${when(e.received_at)}</small
                  >
                </td>
                <td class="id"><a class="mono" href="/console/jobs/${e.job_id}">${e.job_id}</a></td>
                <td class="num">${e.attempts}</td>
                <td><code>${e.last_error ?? e.error_code ?? ''}</code></td>
                <td>
                  <form class="inline" method="post" action="${action(e, 'retry')}"><button type="submit">Retry</button></form>
                  <form class="inline" method="post" action="${action(e, 'discard')}">
                    <input
                      type="text"
                      name="note"
                      required
                      maxlength="2000"
                      placeholder="why it is discarded"
                      aria-label="discard note"
                    /><button class="danger" type="submit">Discard</button>
                  </form>
                </td>
              </tr>`,
          )}
          ${
            events.data.length === 0
              ? html`<tr>
                  <td colspan="5" class="muted">No dead letters.</td>
                </tr>`
              : ''
          }
        </tbody>
      </table>
      ${pager(
        '/console/dead-letters',
        query,
        events.data.map((e) => ({ id: e.id ?? e.event_key })),
        events.has_more,
        direction,
      )}`,
  );
};

function eventPath(request: { params: unknown }, verb: string): string {
  const { provider, key } = request.params as { provider: string; key: string };
  return `/v1/events/${encodeURIComponent(provider)}/${encodeURIComponent(key)}/${verb}`;
}

export const retryDeadLetter: PageHandler = async ({ api, request, reply }) => {
  const answer = await api.call('POST', eventPath(request, 'retry'), {});
  if (answer.status !== 202) throw new ConsoleApiError(answer);
  await reply.redirect('/console/dead-letters?done=retried', 303);
};

export const discardDeadLetter: PageHandler = async ({ api, request, reply }) => {
  const note = String((request.body as { note?: string } | null)?.note ?? '');
  const answer = await api.call('POST', eventPath(request, 'discard'), { note });
  if (answer.status !== 200) throw new ConsoleApiError(answer);
  await reply.redirect('/console/dead-letters?done=discarded', 303);
};
