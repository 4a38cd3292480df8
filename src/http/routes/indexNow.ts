import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import {
  indexNowKeyListSchema,
  indexNowKeySchema,
  indexNowSubmissionSchema,
  listHostIndexNowKeys,
  registerIndexNowKey,
  removeIndexNowKey,
  submitIndexNow,
} from '../../domain/indexNow.ts'
import { signalReceiptSchema } from '../../domain/signals.ts'
import { INDEXNOW_BODY_LIMIT_BYTES, INDEXNOW_KEY_RULE, INDEXNOW_MAX_URLS } from '../../core/indexNow.ts'
import type { AppContext } from '../context.ts'
import { batchLimit } from '../batchLimit.ts'
import { json, openProblems, problems } from '../responses.ts'
import { hostParams } from './hosts.ts'

const keyParams = hostParams.extend({ key: indexNowKeySchema })

/** What the two submission routes answer (IndexNow clients read the status; the receipt is for operators). */
const SUBMISSION_RESPONSES = {
  200: json('The URLs are committed as signals of source `indexnow`.', signalReceiptSchema),
  ...openProblems({
    400: 'Invalid format: the body or query does not match the schema, or a URL or host is not one; nothing was stored.',
    403: 'The key is not registered for the host; nothing was stored.',
    409: 'The URL rules changed while the request was handled; nothing was stored, send it again.',
    413: `More than ${INDEXNOW_MAX_URLS.toLocaleString('en')} URLs, or a larger body than they need; nothing was stored.`,
    422: `A URL (or keyLocation) is not on the host, or the key is not ${INDEXNOW_KEY_RULE}; nothing was stored.`,
  }),
}

const SUBMISSION_DESCRIPTION =
  'The IndexNow protocol (indexnow.org), open to websites and search engines: no API key, but a key the operator registered for the host (PUT /v1/hosts/{host}/indexnow-keys/{key}). ' +
  'Each URL becomes a signal of source `indexnow` without a claimed change time, received now to the second, as POST /v1/signals would store it: ' +
  'a page is pulled forward as the source’s learned trust on the host allows, and unknown URLs register pages only when the source allows discovery (PUT /v1/signal-sources/indexnow). ' +
  'All or nothing: one URL off the host refuses the whole submission. A retry within the same second stores nothing twice (duplicates).'

/** IndexNow: the open submission routes, and the keys the operator registers per host (docs/api.md "IndexNow"). */
export const indexNowRoutes: FastifyPluginAsyncZod<AppContext> = async (app, ctx) => {
  app.post('/indexnow', {
    bodyLimit: INDEXNOW_BODY_LIMIT_BYTES,
    preValidation: batchLimit('urlList', INDEXNOW_MAX_URLS, 'the IndexNow limit'),
    schema: {
      operationId: 'postIndexNow',
      tags: ['signals'],
      summary: 'Submit changed URLs of a host (IndexNow)',
      description: `${SUBMISSION_DESCRIPTION} Send Content-Type: application/json; charset=utf-8.`,
      body: indexNowSubmissionSchema,
      response: SUBMISSION_RESPONSES,
    },
    handler: async (request) =>
      submitIndexNow(ctx, {
        host: request.body.host,
        key: request.body.key,
        keyLocation: request.body.keyLocation ?? null,
        urls: request.body.urlList,
        at: {
          host: '/body/host',
          key: '/body/key',
          keyLocation: '/body/keyLocation',
          url: (index) => `/body/urlList/${index}`,
        },
      }),
  })

  app.get('/indexnow', {
    schema: {
      operationId: 'getIndexNow',
      tags: ['signals'],
      summary: 'Submit one changed URL (IndexNow)',
      description: `${SUBMISSION_DESCRIPTION} The host is the URL’s.`,
      querystring: z.object({
        url: z.string().describe('The changed URL, URL-encoded.'),
        key: z.string().describe(`A key registered for the URL’s host: ${INDEXNOW_KEY_RULE}.`),
        keyLocation: z.string().optional().describe('Where the site publishes the key, on the same host; not fetched.'),
      }),
      response: SUBMISSION_RESPONSES,
    },
    handler: async (request) =>
      submitIndexNow(ctx, {
        host: null,
        key: request.query.key,
        keyLocation: request.query.keyLocation ?? null,
        urls: [request.query.url],
        at: {
          host: '/querystring/url',
          key: '/querystring/key',
          keyLocation: '/querystring/keyLocation',
          url: () => '/querystring/url',
        },
      }),
  })

  app.get('/v1/hosts/:host/indexnow-keys', {
    config: { role: 'reader' },
    schema: {
      operationId: 'listIndexNowKeys',
      tags: ['hosts'],
      summary: 'A host’s IndexNow keys',
      description: 'The keys the host may submit URLs with on /indexnow; empty when it has none.',
      params: hostParams,
      response: { 200: json('The host’s keys.', indexNowKeyListSchema), ...problems({ 400: 'Not a host name.' }) },
    },
    handler: async (request) => listHostIndexNowKeys(ctx, request.params.host),
  })

  app.put('/v1/hosts/:host/indexnow-keys/:key', {
    config: { role: 'admin' },
    schema: {
      operationId: 'putIndexNowKey',
      tags: ['hosts'],
      summary: 'Allow a host an IndexNow key',
      description:
        'Stands for the key file the protocol has sites publish: submissions for the host with this key are accepted. Registering it again changes nothing. No body.',
      params: keyParams,
      response: {
        200: json('The host’s keys, the new one among them.', indexNowKeyListSchema),
        ...problems({ 400: `Not a host name, or the key is not ${INDEXNOW_KEY_RULE}.` }),
      },
    },
    handler: async (request) => registerIndexNowKey(ctx, request.params.host, request.params.key),
  })

  app.delete('/v1/hosts/:host/indexnow-keys/:key', {
    config: { role: 'admin' },
    schema: {
      operationId: 'deleteIndexNowKey',
      tags: ['hosts'],
      summary: 'Withdraw a host’s IndexNow key',
      description: 'Submissions with the key are refused (403) from now on; the signals they sent stay.',
      params: keyParams,
      response: {
        204: z.null().describe('The key is withdrawn.'),
        ...problems({ 400: 'Not a host name or not a key.', 404: 'The host has no such key.' }),
      },
    },
    handler: async (request, reply) => {
      await removeIndexNowKey(ctx, request.params.host, request.params.key)
      return reply.code(204).send(null)
    },
  })
}
