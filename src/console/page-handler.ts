import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ConsoleApi, Role } from './api.js';
import type { Html } from './html.js';
import type { PageContext } from './layout.js';

/** What a console page gets: the API as the signed-in credential, who that is, the request. */
export interface PageRequest {
  api: ConsoleApi;
  role: Role;
  request: FastifyRequest;
  reply: FastifyReply;
  context: PageContext;
}

/** A page renders HTML, or answers itself (a redirect, a download) and returns nothing. */
export type PageHandler = (page: PageRequest) => Promise<Html | void>;
