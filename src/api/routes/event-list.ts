import { Type } from '@sinclair/typebox';
import { listEvents } from '../../queue/event-list.js';
import { EVENT_STATES } from '../../queue/index.js';
import { requireAccess } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { ApiError } from '../errors.js';
import { JobIdFilter, ProviderFilter, TenantIdFilter, listTenantOf } from '../list-filters.js';
import { EventListItem, eventListItem, literals } from '../list-views.js';
import { ListOf, ListQueryFields, pageOf, pageRequest } from '../pagination.js';
import { bearerAuth, errors } from '../schemas.js';

/** An event's id in this list: its provider's name (no "/" in it), a slash, its event key (up to 500 characters). */
const EVENT_ID = /^[a-z0-9][a-z0-9_-]{0,62}\/.{1,500}$/s;
const EventCursor = (description: string) => Type.Optional(Type.String({ maxLength: 600, description }));

const EventListQuery = Type.Object({
  ...ListQueryFields,
  starting_after: EventCursor('an event id (provider/event_key): the page of events after it (older)'),
  ending_before: EventCursor('an event id (provider/event_key): the page of events before it (newer)'),
  state: Type.Optional(literals(EVENT_STATES)),
  provider: ProviderFilter,
  ...JobIdFilter,
  ...TenantIdFilter,
});

export function eventListRoutes(app: ApiApp, { pool }: ApiContext): void {
  app.get(
    '/v1/events',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary:
          'Provider events, newest received first, in every state (dead and discarded included; a tenant its own, without the raw error text); the cursor is an event id, provider/event_key',
        tags: ['jobs'],
        security: bearerAuth,
        querystring: EventListQuery,
        response: { 200: ListOf(EventListItem), ...errors(400, 401, 403) },
      },
    },
    async (request) => {
      const query = request.query;
      const page = pageRequest(query, (id) => EVENT_ID.test(id));
      const filter = {
        tenantId: listTenantOf(request, query.tenant_id),
        state: query.state ?? null,
        provider: query.provider ?? null,
        jobId: query.job_id ?? null,
      };
      const rows = await listEvents(pool, filter, page);
      if (!rows) {
        const param = page.cursor!.direction === 'after' ? 'starting_after' : 'ending_before';
        throw new ApiError(400, 'invalid_cursor', `${param} names no event of this list: send the id (provider/event_key) of an event it returned`, param);
      }
      const { data, has_more } = pageOf(rows, page);
      const audience = request.principal?.kind === 'admin' ? 'admin' : 'tenant';
      return { data: data.map((e) => eventListItem(e, audience)), has_more };
    },
  );
}
