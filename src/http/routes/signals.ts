import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { IngestResult, ObservationReport } from '../../domain/ingest.ts'
import { ingestSitemap } from '../../domain/sitemapItems.ts'
import {
  ingestSignals,
  sitemapReceiptSchema,
  listSourceHosts,
  listSources,
  putSourceSettings,
  signalReceiptSchema,
  signalSourceHostListSchema,
  signalSourceListSchema,
  signalSourceSchema,
  signalSourceSettingsSchema,
} from '../../domain/signals.ts'
import { sourceNameSchema } from '../../core/signals.ts'
import { SITEMAP_MAX_BYTES } from '../../core/sitemaps.ts'
import { timestampSchema } from '../../core/timestamps.ts'
import type { AppContext } from '../context.ts'
import { batchLimit } from '../batchLimit.ts'
import { json, problems } from '../responses.ts'
import { HttpProblem, problem } from '../problems.ts'
import { listLimitSchema, postSignalsBodySchema } from '../schemas.ts'

const sourceParams = z.object({ source: sourceNameSchema })

/** The media types a sitemap is posted as: as fetched (XML, or gzip). */
const SITEMAP_MEDIA_TYPES = ['application/xml', 'text/xml', 'application/gzip', 'application/x-gzip']

/** Change signals in, and the trust learned per source (docs/api.md "Signals"). */
export const signalsRoutes: FastifyPluginAsyncZod<
  AppContext & { onIngested?: (result: IngestResult, items: readonly ObservationReport[]) => void }
> = async (app, ctx) => {
  app.post('/v1/signals', {
    config: { role: 'crawler', textCheckedPerItem: 'signals' },
    preValidation: batchLimit('signals', ctx.maxBatchItems),
    schema: {
      operationId: 'postSignals',
      tags: ['signals'],
      summary: 'Report change signals in a batch',
      description:
        'One transaction per batch: 200 means every accepted signal is durably committed. accepted + duplicates + future + unknownPages + rejected = items. ' +
        'A signal is stored once per (page, source, changedAt or else receivedAt): repeating a batch is safe. ' +
        'A signal makes its page due now only when its source’s learned precision on the host says the page is at least as likely changed as at its scheduled crawl (docs/math.md 5.3); the crawl comes out of the same budget.',
      body: postSignalsBodySchema,
      response: {
        200: json('The batch is committed: what became of the signals.', signalReceiptSchema),
        ...problems({ 400: 'The body does not match the schema; nothing was stored.', 409: true, 413: true }),
      },
    },
    handler: async (request) => ingestSignals(ctx, request.body.signals),
  })

  // A sitemap is posted as it was fetched; the body is read as bytes (src/core/sitemaps.ts parses it).
  app.addContentTypeParser(
    SITEMAP_MEDIA_TYPES,
    { parseAs: 'buffer', bodyLimit: SITEMAP_MAX_BYTES },
    (_req, body, done) => done(null, body),
  )

  app.post('/v1/sitemaps', {
    config: { role: 'crawler' },
    bodyLimit: SITEMAP_MAX_BYTES,
    schema: {
      operationId: 'postSitemap',
      tags: ['signals'],
      summary: 'Post a fetched sitemap document',
      description:
        'The body is the document as fetched (application/xml or text/xml; application/gzip for a .xml.gz), a <urlset> or a <sitemapindex>. ' +
        'It is parsed without a DTD (a DOCTYPE is refused, so no entity is expanded) within the protocol’s limits: 50,000 entries and 50 MB uncompressed (413 beyond). ' +
        'Entries for other hosts than the sitemap’s are dropped and counted; each dated page entry is a signal of `source`. Malformed XML → 422, nothing stored. ' +
        'When `url` is a registered sitemap item (PUT /v1/pages with kind sitemap), the document is also its crawl, as an observation with the document’s content hash: the item learns its change rate, `leaseId` completes its lease, and a sitemap index registers the sitemaps it lists as sitemap items of the same host (docs/api.md "Sitemaps as scheduled items").',
      querystring: z.object({
        url: z
          .string()
          .describe('The URL the sitemap was fetched from: its host is the only one its entries may name.'),
        source: sourceNameSchema.default('sitemap'),
        receivedAt: timestampSchema
          .optional()
          .describe('When it was fetched; absent = now. For a sitemap item, the time of its crawl.'),
        leaseId: z
          .string()
          .min(1)
          .max(100)
          .optional()
          .describe('For a leased sitemap item: completes that lease on it (as an observation’s leaseId does).'),
      }),
      response: {
        200: json(
          'The document’s entries are committed as signals, and its crawl when it is a sitemap item.',
          sitemapReceiptSchema,
        ),
        ...problems({
          400: 'Bad url, source or receivedAt, or no document in the body.',
          409: true,
          413: 'More than 50,000 entries or 50 MB uncompressed.',
          422: 'Not a well-formed sitemap (malformed XML, a DOCTYPE, another root element, a corrupt gzip stream).',
        }),
      },
    },
    handler: async (request) => {
      if (!Buffer.isBuffer(request.body))
        throw new HttpProblem(
          problem(
            400,
            `post the sitemap document as the body, as fetched: ${SITEMAP_MEDIA_TYPES.join(', ')}; nothing was stored`,
          ),
        )
      return ingestSitemap(ctx, {
        sitemapUrl: request.query.url,
        source: request.query.source,
        receivedAt: request.query.receivedAt ?? null,
        leaseId: request.query.leaseId ?? null,
        body: request.body,
        // A sitemap item's crawl counts in the metrics like any reported crawl.
        ...(ctx.onIngested ? { onCrawl: ctx.onIngested } : {}),
      })
    },
  })

  app.get('/v1/signal-sources', {
    config: { role: 'reader' },
    schema: {
      operationId: 'listSignalSources',
      tags: ['signals'],
      summary: 'Signal sources and their fleet-wide trust',
      description:
        'Every source that has sent signals or has settings, with the counts behind its precision and recall.',
      response: { 200: json('The sources.', signalSourceListSchema), ...problems() },
    },
    handler: async () => listSources(ctx),
  })

  app.get('/v1/signal-sources/:source/hosts', {
    config: { role: 'reader' },
    schema: {
      operationId: 'listSignalSourceHosts',
      tags: ['signals'],
      summary: 'A source’s trust on each host',
      description:
        'Per host: the counts and the precision and recall posteriors, which borrow from the source’s other hosts.',
      params: sourceParams,
      querystring: z.object({
        after: z.string().optional().describe('nextCursor of the previous response.'),
        host: z.string().optional().describe('Only this host.'),
        hostPrefix: z.string().min(1).max(253).optional().describe('Only hosts whose name starts with this text.'),
        limit: listLimitSchema,
      }),
      response: {
        200: json('The next hosts.', signalSourceHostListSchema),
        ...problems({ 400: true, 404: 'No such source.' }),
      },
    },
    handler: async (request) =>
      listSourceHosts(ctx, request.params.source, {
        after: request.query.after ?? null,
        host: request.query.host ?? null,
        hostPrefix: request.query.hostPrefix ?? null,
        limit: request.query.limit,
      }),
  })

  app.put('/v1/signal-sources/:source', {
    config: { role: 'admin' },
    schema: {
      operationId: 'putSignalSource',
      tags: ['signals'],
      summary: 'Set what a source may do',
      description: 'Whether its signals for unknown URLs register pages (discovery), and with what importance.',
      params: sourceParams,
      body: signalSourceSettingsSchema,
      response: { 200: json('The source with its settings.', signalSourceSchema), ...problems({ 400: true }) },
    },
    handler: async (request) => putSourceSettings(ctx, request.params.source, request.body),
  })
}
