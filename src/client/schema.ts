/**
 * Types of the recrawl HTTP API, generated from the OpenAPI document the code describes
 * (the committed openapi/openapi.json plus the SIMULATED_CLOCK=true routes GET and PUT /v1/clock).
 * Do not edit: run `npm run cli -- openapi` after changing a route, and commit the result.
 */

export interface paths {
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Liveness: the process serves requests
         * @description Open (no key). Touches no database.
         */
        get: operations["healthz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Readiness: database reachable and every migration applied
         * @description Open (no key). Load balancers send traffic only while this is 200.
         */
        get: operations["readyz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/pages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List pages (cursor paging by id)
         * @description Pages in id order, optionally of one host; follow nextCursor until it is null.
         */
        get: operations["listPages"];
        /**
         * Register or update pages in bulk
         * @description PUT semantics per page: importance (default 1) and bounds (default none) replace the stored ones. Any invalid item → 400, nothing written.
         */
        put: operations["putPages"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/pages/by-url": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a page by URL (normalised before lookup)
         * @description The URL is normalised as on registration (lower-case scheme and host, default port and fragment dropped) before the lookup.
         */
        get: operations["getPageByUrl"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/pages/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a page with every online estimate
         * @description The page’s attributes, counts, every online estimate, rate, due time and lease.
         */
        get: operations["getPage"];
        put?: never;
        post?: never;
        /**
         * Delete a page and its history
         * @description Removes the page and its observation history.
         */
        delete: operations["deletePage"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/pages/{id}/observations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A page's observation history, newest first
         * @description Every stored crawl of the page, newest first; follow nextCursor (as before) until it is null.
         */
        get: operations["listPageObservations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/pages/{id}/estimates": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Every estimator the page history supports, with confidence intervals and the update distribution
         * @description The online estimates from the page state, the exact MLE with its 95 % interval and exact moment matching from the stored history, the change-class probabilities, the local NHPP rate and the estimated age distribution of the update process (docs/math.md sections 1 and 2).
         */
        get: operations["getPageEstimates"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/observations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Report crawls in a batch
         * @description One transaction per batch: 200 means every accepted item is durably committed. accepted + duplicates + late + rejected = items. The first crawl of a page is its baseline; from the second on, changed or contentHash is required. A page’s items within one batch are applied in crawl-time order; crawls older than what is already stored are late, and are folded in by replaying the page’s history in crawl-time order (a changed flag always refers to the crawl before it in time). LLN and SA use the empirical crawl rate p̂ = n/T (docs/math.md 1.2).
         */
        post: operations["postObservations"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/settings": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Current settings
         * @description The settings every replica uses, defaults filled in.
         */
        get: operations["getSettings"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Change settings (any subset; lln and sa merge key by key)
         * @description The merged settings must be valid as a whole, else 400 and nothing changes. A change of estimator, bounds, LLN α, objective or schedule re-derives every page’s estimates, rate and due time in the same transaction.
         */
        patch: operations["patchSettings"];
        trace?: never;
    };
    "/v1/clock": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Simulated time (SIMULATED_CLOCK=true only)
         * @description The service’s current simulated time.
         */
        get: operations["getClock"];
        /**
         * Move simulated time forward (SIMULATED_CLOCK=true only; never backwards)
         * @description A time before the current one leaves the clock where it is.
         */
        put: operations["setClock"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/leases": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Take due pages to crawl
         * @description Pages whose dueAt has passed (a page’s nextCrawlAt, or sooner while recrawl explores or probes it), most overdue first (higher importance first when tied). Concurrent callers never receive the same page; a host with minDelaySeconds gets at most one page per delay. Report each crawl with the leaseId to complete it; unfinished pages return to the pool when the lease expires.
         */
        post: operations["takeLease"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/leases/{leaseId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Release a lease early
         * @description The lease’s pages not yet reported return to the pool at once.
         */
        delete: operations["releaseLease"];
        options?: never;
        head?: never;
        /**
         * Extend a lease (heartbeat)
         * @description The pages the lease still holds (not yet reported, not expired) are held until now + leaseSeconds. Send it before the lease expires; an expired lease cannot be extended (its pages may have gone to another worker).
         */
        patch: operations["extendLease"];
        trace?: never;
    };
    "/v1/leases/{leaseId}/release": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Give single pages of a lease back without crawling them
         * @description retry: the page stays due (or is due after retryAfterSeconds), for another worker or later; skip: this round is skipped and the page is due again one period from now. Pages the lease does not hold are listed in notHeld; the others are released.
         */
        post: operations["releaseLeasePages"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/schedule": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Upcoming crawls in due order (unleased pages)
         * @description What leases would hand out next, without leasing anything.
         */
        get: operations["getSchedule"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/optimize": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Solve every page’s crawl rate now
         * @description Waits for a run in progress on another replica. Bounds whose sum exceeds the budget → 422.
         */
        post: operations["runOptimizer"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/hosts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Hosts with politeness limits
         * @description Every host that has a limit, with its page count.
         */
        get: operations["listHosts"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/hosts/{host}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /**
         * Set a host’s limits
         * @description maxCrawlsPerDay applies from the next optimiser run; minDelaySeconds from the next lease.
         */
        put: operations["putHost"];
        post?: never;
        /**
         * Remove a host’s limits
         * @description The host’s pages keep their rates until the next optimiser run; leases stop spacing them at once.
         */
        delete: operations["deleteHost"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Prometheus metrics (text exposition format)
         * @description Open (no key), like /healthz. Gauges that need SQL come from a snapshot cached for a few seconds per replica, so scrapes never query per request.
         */
        get: operations["getMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The numbers of /metrics as JSON, with rate histograms, optimiser runs, overdue hosts and time series
         * @description A snapshot cached for a few seconds per replica; the time series and crawl activity cover the last `hours`.
         */
        get: operations["getStats"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description The simulated time. */
        Clock: {
            /**
             * Format: date-time
             * @description RFC 3339 timestamp.
             */
            now: string;
        };
        /** @description Where to move the simulated time. */
        ClockMove: {
            /**
             * Format: date-time
             * @description RFC 3339 time to move to; an earlier time than the current one changes nothing.
             */
            now: string;
        };
        /** @description One estimator's change rate for a page. */
        Estimate: {
            /** @description An online estimator (EstimatorName), or mleExact / momentMatchingExact from the stored history. */
            name: string;
            changesPerDay: number | null;
            /** @description 95 % confidence interval [low, high] in changes per day, where one applies. */
            ci95: number[] | null;
            /**
             * @description online: the O(1) state updated on every crawl; history: recomputed from stored observations.
             * @enum {string}
             */
            source: "online" | "history";
            /** @description docs/math.md section. */
            section: string;
            note?: string;
        };
        /** @description Every estimator the page history supports, with confidence intervals, change classes and the update distribution. */
        Estimates: {
            pageId: string;
            intervals: number;
            changes: number;
            observedDays: number;
            /** @description Stored observations used by the history estimators (most recent first, capped). */
            historyObservations: number;
            estimators: components["schemas"]["Estimate"][];
            changeClasses: {
                name: string;
                changesPerDay: number;
                probability: number;
            }[];
            /** @description Localised rates from power-law NHPP fits on windows of update points (docs/math.md 2.1). */
            localRate: {
                /** @description The current rate: λ̌(now) with a rising or falling trend, n/T over the window with none. */
                changesPerDay: number;
                /** @enum {string} */
                trend: "rising" | "falling" | "constant";
                /** @description β̃ of the latest window (β̂ with 3 points or fewer). */
                beta: number;
                /** @description Update points in the latest window. */
                points: number;
                /**
                 * @description Which estimate changesPerDay is.
                 * @enum {string}
                 */
                model: "power-law" | "constant";
                /**
                 * Format: date-time
                 * @description Start of the latest window.
                 */
                windowStart: string;
                /** @description Every estimate of the latest window’s rate now (Singh 2007): n/T, λ̌, λ̄, the Duane plot’s instantaneous and cumulative rates. */
                estimators: {
                    /** @enum {string} */
                    name: "mean" | "weibull" | "lambdaBar" | "duane" | "duaneCumulative";
                    changesPerDay: number | null;
                }[];
                /** @description Windows of consistent trend over the whole history, oldest first (the last is the current one). */
                windows: {
                    /**
                     * Format: date-time
                     * @description RFC 3339 timestamp.
                     */
                    from: string;
                    /**
                     * Format: date-time
                     * @description The window’s last update point.
                     */
                    to: string;
                    points: number;
                    /** @enum {string} */
                    trend: "rising" | "falling" | "constant";
                    beta: number;
                    /** @description n over the window’s length. */
                    meanChangesPerDay: number;
                    /** @description λ̌ at the window’s last point; null with 3 points or fewer. */
                    endChangesPerDay: number | null;
                }[];
            } | null;
            /** @description The update-interval distribution (docs/math.md 2.2); null with fewer than 10 crawls. */
            updateDistribution: {
                /**
                 * @description M2 (Last-Modified ages), M4 (constant crawl interval) or M6 (random intervals).
                 * @enum {string}
                 */
                method: "M2" | "M4" | "M6";
                /** @description Why this method: the share of crawls with an age and the variation of the crawl intervals. */
                reason: string;
                /** @description G_U: the distribution of the content’s age at a random time. */
                ageCdf: {
                    ageDays: number;
                    cdf: number;
                }[];
                /** @description F_U(x) = 1 − g_U(x)/g_U(0): the distribution of the time between updates; null when the data do not identify g_U(0). */
                intervalCdf: {
                    intervalDays: number;
                    cdf: number;
                }[] | null;
                /** @description Crawl interval Δ when G_U is known only at its multiples (M4). */
                latticeDays: number | null;
                /** @description 1/g_U(0); null when not identified. */
                meanUpdateIntervalDays: number | null;
                /** @description Upper bound of the mean update interval, x/G_U(x) at the first point. */
                meanUpdateIntervalBoundDays: number | null;
                /** @description CV of the update intervals, from E[A] = μE[U²]/2. */
                coefficientOfVariation: number | null;
                /** @description What the data identify and what they do not. */
                note: string;
                /** @description Test of the Poisson hypothesis (docs/math.md 2.2). */
                poissonFit: {
                    /** @enum {string} */
                    verdict: "consistent-with-poisson" | "not-poisson" | "cannot-tell";
                    /** @description The Poisson model’s rate estimate the curve is compared with. */
                    changesPerDay: number | null;
                    /** @description sup |Ĝ_U(x) − (1 − e^{−μ̂x})| where G_U is identified. */
                    distance: number | null;
                    /** @description 95th percentile of the distance for Poisson pages with the same crawls. */
                    distanceBand95: number | null;
                    /** @description Parametric-bootstrap p-value of the distance. */
                    pValue: number | null;
                    /** @description not-poisson when pValue ≤ level. */
                    level: number;
                    bootstrapSamples: number;
                    note: string;
                };
                /** @description M1 and M3, the estimators of earlier work (biased unless Poisson), and M5, which repairs M3’s samples. */
                comparisons: {
                    /** @enum {string} */
                    method: "M1" | "M3" | "M5";
                    /** @enum {string} */
                    estimates: "F_U" | "G_U";
                    points: {
                        days: number;
                        cdf: number;
                    }[];
                    meanDays: number | null;
                    note: string;
                }[];
            } | null;
        };
        /**
         * @description The change-rate estimator that drives scheduling (docs/math.md section 1).
         * @enum {string}
         */
        EstimatorName: "naive" | "lln" | "sa" | "mle" | "mleAdaptive" | "momentMatching" | "choGm" | "lastModified";
        /** @description The process serves requests. */
        Health: {
            /** @constant */
            status: "ok";
        };
        /** @description A host with politeness limits or pacing. */
        Host: {
            host: string;
            /** @description Cap on the host’s total crawl rate; null = none. */
            maxCrawlsPerDay: number | null;
            /** @description Minimum time between two leased pages of the host; null = none. */
            minDelaySeconds: number | null;
            /** @description The robots.txt Crawl-delay crawlers reported for the host (robotsCrawlDelaySeconds); null = none. */
            crawlDelaySeconds: number | null;
            /** @description Adaptive delay: doubles when the host answers 429 (or 503 with Retry-After) or mostly errors, shrinks again with every normal answer; null = none. */
            throttleDelaySeconds: number | null;
            /** @description The time between two leased pages of the host: the largest of minDelaySeconds, crawlDelaySeconds and throttleDelaySeconds. A paced host also gets at most 86,400 / pace crawls per day from the optimiser. */
            paceSeconds: number;
            /** @description Pages registered on the host. */
            pages: number;
        };
        /** @description PUT semantics: both limits are replaced; an absent one is null. At least one must be given. */
        HostLimits: {
            /** @description Cap on the host’s total crawl rate (docs/math.md 3.2); null or absent = none. */
            maxCrawlsPerDay?: number | null;
            /** @description Minimum time between two leased pages of the host; null or absent = none. */
            minDelaySeconds?: number | null;
        };
        /** @description Every host with limits or pacing, by name. */
        HostList: {
            hosts: components["schemas"]["Host"][];
        };
        /** @description The unexpired lease holding a page. */
        Lease: {
            leaseId: string;
            worker: string | null;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp.
             */
            expiresAt: string;
        };
        /** @description The lease after a heartbeat. */
        LeaseExtended: {
            leaseId: string;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp.
             */
            expiresAt: string;
            /** @description Pages the lease still holds, now until expiresAt. */
            pages: number;
        };
        /** @description A heartbeat: keep the pages of the lease for longer. */
        LeaseExtension: {
            /**
             * @description The lease now expires this long from now.
             * @default 300
             */
            leaseSeconds?: number;
        };
        /** @description Due pages handed out under one lease. */
        LeaseGrant: {
            /** @description Report each crawl with this leaseId to complete the lease for that page. */
            leaseId: string;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp.
             */
            expiresAt: string;
            /** @description Most overdue first; empty when nothing is due. */
            pages: components["schemas"]["LeasedPage"][];
        };
        /** @description What releasing the lease returned to the pool. */
        LeaseRelease: {
            /** @description Pages returned to the pool. */
            released: number;
        };
        /** @description Who takes the lease, how many pages, for how long, and optionally from which hosts. */
        LeaseRequest: {
            /** @description Name of the crawler taking the lease (shown on leased pages). */
            worker: string;
            /**
             * @description Most pages to hand out.
             * @default 100
             */
            limit?: number;
            /**
             * @description Lease lifetime; unfinished pages return to the pool after it.
             * @default 300
             */
            leaseSeconds?: number;
            /** @description Only pages of these hosts. */
            hosts?: string[];
        };
        /** @description A page to crawl now, with what a conditional request needs (a 304 answer is reported as unchanged). */
        LeasedPage: {
            id: string;
            url: string;
            host: string;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp.
             */
            dueAt: string;
            /** @description ETag of the latest successful fetch: send it as If-None-Match. */
            etag: string | null;
            /** @description Last-Modified of the latest successful fetch: send it as If-Modified-Since. */
            lastModified: string | null;
            /** @description The content hash recrawl compares the next report with. */
            contentHash: string | null;
        };
        /** @description One stored crawl of a page. */
        Observation: {
            /**
             * Format: date-time
             * @description RFC 3339 timestamp.
             */
            crawledAt: string;
            /** @description null: baseline, failed fetch, or late crawl without change information. */
            changed: boolean | null;
            contentHash: string | null;
            /** @description HTTP Last-Modified as reported (RFC 3339), or null. */
            lastModified: string | null;
            httpStatus: number | null;
            /** @description Fed to the online estimators. */
            applied: boolean;
            late: boolean;
            /** @description Length of the estimator interval this crawl closed. */
            intervalSeconds: number | null;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp.
             */
            receivedAt: string;
        };
        /** @description Crawl reports, applied in one transaction. */
        ObservationBatch: {
            /** @description At most MAX_BATCH_ITEMS (default 5,000) items; more → 413 and nothing is applied. */
            observations: components["schemas"]["ObservationReport"][];
        };
        /** @description A page's observations, newest first, one response of a cursor listing. */
        ObservationList: {
            observations: components["schemas"]["Observation"][];
            /** @description Pass as before for the next items; null at the end. */
            nextCursor: string | null;
        };
        /** @description What became of a batch of reports: accepted + duplicates + late + rejected = items. */
        ObservationReceipt: {
            /** @description Stored and applied in order (baselines included). */
            accepted: number;
            /** @description Repeats of a stored (url, crawledAt): ignored. */
            duplicates: number;
            /** @description Older than the page’s latest crawl: stored, and folded in by replaying the page’s history in crawl-time order. */
            late: number;
            /** @description Not stored. */
            rejected: {
                /** @description Position of the item in the batch. */
                index: number;
                reason: string;
            }[];
            /** @description Items stored and applied whose leaseId did not complete a lease on the page (malformed, unknown or already completed, expired, or the page was handed out again). The crawl is never lost because of its lease. */
            leaseNotCompleted: {
                /** @description Position of the item in the batch. */
                index: number;
                reason: string;
            }[];
        };
        /** @description One crawl of one page. */
        ObservationReport: {
            /** @description Absolute http(s) URL of the crawled page. */
            url: string;
            /**
             * Format: date-time
             * @description RFC 3339 time of the crawl; at most 5 minutes in the future.
             */
            crawledAt: string;
            /** @description Did the page change since the previous crawl? Optional when contentHash is given. */
            changed?: boolean;
            /** @description Any digest of the content; a change = differs from the previous hash. */
            contentHash?: string;
            /**
             * Format: date-time
             * @description HTTP Last-Modified of the response, RFC 3339.
             */
            lastModified?: string;
            /** @description HTTP ETag of the response (kept for a conditional request next time). */
            etag?: string;
            /** @description HTTP status of the response. 304 = unchanged; 301/308 need redirectTo; 404/410/429/5xx are failures (docs/api.md "Fetch outcomes"). */
            httpStatus?: number;
            /**
             * @description The fetch got no HTTP answer: a timeout, DNS, connection, TLS or other error.
             * @enum {string}
             */
            fetchError?: "timeout" | "dns" | "connection" | "tls" | "other";
            /** @description Retry-After of a 429 or 503, in seconds (the crawler converts an HTTP date). */
            retryAfterSeconds?: number;
            /** @description The Location of a 301 or 308: the page moved there (registered as a page) and is no longer scheduled. Without it a 301/308 says nothing. */
            redirectTo?: string;
            /** @description The Crawl-delay of the host's robots.txt that applies to this crawler; 0 clears it. */
            robotsCrawlDelaySeconds?: number;
            /** @description Completes that lease for this page. */
            leaseId?: string;
        };
        /** @description The outcome of one optimiser run: the multiplier, the rates it set and what it cost. */
        OptimizerRun: {
            /** @description The budget’s Lagrange multiplier, in importance × per-day units. */
            lambda: number;
            pages: number;
            /** @description Pages with a rate above their lower bound. */
            pagesCrawled: number;
            budgetCrawlsPerDay: number;
            /** @description Σμ·f(ρ)/Σμ under the current estimates. */
            expectedFreshness: number;
            durationMs: number;
            /** @description Pages whose rate changed and were re-timed. */
            pagesRetimed: number;
        };
        /** @description A page: its attributes, crawl history counts, every online estimate, its rate and due time. */
        Page: {
            /** @description Page id (a decimal integer as a string). */
            id: string;
            /** @description Normalised absolute URL. */
            url: string;
            host: string;
            /** @description Weight μ ≥ 0 in the freshness objective. */
            importance: number;
            /** @description The page's own lower bound; null = settings.minCrawlsPerDay. */
            minCrawlsPerDay: number | null;
            /** @description The page's own upper bound; null = settings.maxCrawlsPerDay. */
            maxCrawlsPerDay: number | null;
            /** @description Observations stored for the page (baseline, in-order and late). */
            crawls: number;
            /** @description In-order crawl intervals fed to the online estimators (n). */
            intervals: number;
            /** @description Intervals among those that saw a change (X). */
            changes: number;
            /** @description RFC 3339 timestamp, or null. */
            firstCrawledAt: string | null;
            /** @description RFC 3339 timestamp, or null. */
            lastCrawledAt: string | null;
            /** @description RFC 3339 timestamp, or null. */
            lastChangedAt: string | null;
            /** @description The estimate that drives scheduling (settings.estimator); null before the first interval. */
            changesPerDay: number | null;
            estimator: components["schemas"]["EstimatorName"];
            /** @description Every online estimate by estimator name, changes per day, clipped to the settings bounds; null without data. */
            estimates: {
                [key: string]: number | null;
            };
            /** @description Rate from the last optimisation plus local updates. */
            crawlsPerDay: number | null;
            /** @description When the rate schedules the next crawl: periodic schedule, lastCrawledAt + 1/crawlsPerDay days; Poisson schedule, lastCrawledAt + an exponential draw with rate crawlsPerDay; before the first crawl, due at once; null = never (rate 0). */
            nextCrawlAt: string | null;
            /** @description When leases hand the page out: nextCrawlAt, except that recrawl crawls a page seen only once again after at most pages/budget days (exploration), probes a page whose every interval saw a change after half its shortest interval, and then waits the time the probe saved (docs/math.md 3.6). */
            dueAt: string | null;
            /** @description Expected fraction of time the stored copy is fresh at crawlsPerDay under the running schedule. */
            expectedFreshness: number | null;
            /** @description The lease holding the page, if any (an expired one until the next lease call returns it). */
            lease: components["schemas"]["Lease"] | null;
            /**
             * @description active: fetched normally; failing: its latest fetches failed, retried with backoff; gone: 404/410 too often, out of the budget and fetched again only every outcomes.goneRecheckDays; redirected: answered 301/308, not scheduled (see redirectTo). A 2xx makes any page active again.
             * @enum {string}
             */
            status: "active" | "failing" | "gone" | "redirected";
            /** @description Failed fetches (404, 410, 5xx, timeouts…) since the last success. */
            consecutiveFailures: number;
            /** @description HTTP status of the latest in-order crawl report that had one. */
            lastHttpStatus: number | null;
            /** @description The latest crawl that answered with content or 304. */
            lastSuccessAt: string | null;
            /** @description Where a redirected page moved (registered as a page of its own). */
            redirectTo: string | null;
            /** @description ETag of the latest successful fetch (If-None-Match). */
            etag: string | null;
            /** @description Last-Modified of the latest successful fetch (If-Modified-Since). */
            lastModified: string | null;
            /** @description Its content hash changed on every fetch, at intervals where a page changing at most hourly would have shown no change at least once with probability 0.99 (docs/math.md 1.11), or even at the shortest probe interval: the crawler hashes noise (ads, timestamps, tokens). Kept at its floor rate until an unchanged fetch; fix the crawler's hashing (hash the normalised main content). */
            noisy: boolean;
        };
        /** @description Pages to register or update; any invalid item → 400 and nothing is written. */
        PageBatch: {
            /** @description At most MAX_BATCH_ITEMS (default 5,000) pages; more → 413. */
            pages: components["schemas"]["PageRegistration"][];
        };
        /** @description How many pages of the batch were new and how many existed. */
        PageBatchResult: {
            created: number;
            updated: number;
        };
        /** @description Pages in id order, one response of a cursor listing. */
        PageList: {
            pages: components["schemas"]["Page"][];
            /** @description Pass as cursor for the next items; null at the end. */
            nextCursor: string | null;
        };
        /** @description A page to register or update: importance and bounds replace the stored ones (absent = default). */
        PageRegistration: {
            /** @description Absolute http(s) URL. */
            url: string;
            /** @description Default 1; 0, or 1e-9 to 1000000000. */
            importance?: number;
            /** @description The page’s own lower bound; null or absent = the settings’ minCrawlsPerDay. */
            minCrawlsPerDay?: number | null;
            /** @description The page’s own upper bound; null or absent = the settings’ maxCrawlsPerDay. */
            maxCrawlsPerDay?: number | null;
        };
        /** @description Pages of the lease given back without a crawl, each with a reason. */
        PagesRelease: {
            pages: {
                /** @description Page id, as in the lease. */
                id: string;
                /**
                 * @description retry: the page stays due (or is due after retryAfterSeconds); skip: due again one period from now.
                 * @enum {string}
                 */
                reason: "retry" | "skip";
                /** @description With retry: not before this long from now. */
                retryAfterSeconds?: number;
            }[];
        };
        /** @description What giving pages back did. */
        PagesReleased: {
            /** @description Pages given back. */
            released: number;
            /** @description Items the lease does not hold (any more). */
            notHeld: {
                index: number;
                reason: string;
            }[];
        };
        /** @description RFC 9457 problem details, sent as application/problem+json. */
        Problem: {
            /** @description A URI naming the problem kind. */
            type: string;
            title: string;
            status: number;
            detail: string;
            /** @description Every bad field, for invalid input. */
            errors?: {
                /** @description JSON pointer into the request, e.g. /body/pages/3/url. */
                path: string;
                message: string;
            }[];
        };
        /** @description Whether the database is reachable and fully migrated. */
        Readiness: {
            /** @enum {string} */
            status: "ready" | "not ready";
            /** @enum {string} */
            database: "postgres" | "embedded";
            /** @description Migrations not yet applied; the service is ready when there is none. */
            pendingMigrations: string[];
        };
        /** @description Upcoming crawls in due order. */
        Schedule: {
            items: components["schemas"]["ScheduledCrawl"][];
        };
        /** @description An unleased page and when it is due. */
        ScheduledCrawl: {
            id: string;
            url: string;
            host: string;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp.
             */
            dueAt: string;
            crawlsPerDay: number | null;
        };
        /** @description Operator settings, shared by every replica (docs/api.md "Settings"). */
        Settings: {
            /** @description Total crawl budget R, crawls per day (1e-9 to 1000000000). */
            budgetCrawlsPerDay: number;
            /**
             * @description Optimiser objective (docs/math.md 3.1, 3.3, 3.4, 3.5). freshness-renewal: periodic crawling with each page's fitted age law (Poisson where its crawls do not show another).
             * @enum {string}
             */
            objective: "freshness" | "freshness-periodic" | "harmonic" | "freshness-renewal";
            /**
             * @description How nextCrawlAt is drawn from crawlsPerDay.
             * @enum {string}
             */
            schedule: "periodic" | "poisson";
            estimator: components["schemas"]["EstimatorName"];
            /** @description Prior change rate for pages without an estimate; also y_0 of the SA estimator. */
            defaultChangesPerDay: number;
            /** @description Default lower bound (exploration floor) of every page. */
            minCrawlsPerDay: number;
            /** @description Default upper bound; null = none. */
            maxCrawlsPerDay: number | null;
            /** @description Every reported estimate is clipped to at least this. */
            minChangesPerDay: number;
            /** @description Every reported estimate is clipped to at most this. */
            maxChangesPerDay: number;
            /** @description Period of the automatic optimiser run. */
            reoptimizeSeconds: number;
            /** @description Leases hand out at most the budget: a fleet-wide allowance fills at budgetCrawlsPerDay and holds at most this many hours of it, so a fleet back from a pause gets at most this much at once. */
            handOutBurstHours: number;
            /** @description Observations for unknown URLs register the page (importance 1); false rejects those items. */
            registerUnknownPages: boolean;
            lln: {
                /** @description LLN regulariser α_k (docs/math.md 1.2): "1/k", "1/sqrt(k)" or a constant in (0, 1) (a constant is not consistent). */
                alpha: ("1/k" | "1/sqrt(k)") | number;
            };
            sa: {
                /** @description SA step exponent γ: η_k = 1/(k+1)^γ (docs/math.md 1.3). */
                gamma: number;
            };
            /** @description What fetch outcomes do to a page (docs/api.md "Fetch outcomes"). */
            outcomes: {
                /** @description Consecutive 404 answers after which a page is gone. */
                goneAfterNotFound: number;
                /** @description Consecutive 410 answers after which a page is gone. */
                goneAfterGone: number;
                /** @description A gone page is fetched again after this many days (a 2xx brings it back); 0 = never again. */
                goneRecheckDays: number;
                /** @description First retry after a 5xx, a timeout or a network error; the wait doubles with every further failure. */
                retryAfterErrorSeconds: number;
                /** @description The retry wait stops growing at the larger of this and the page's period. */
                maxRetryIntervalDays: number;
                /** @description A 301 or 308 with redirectTo registers the target page (with the importance of the source). */
                followRedirects: boolean;
            };
            /** @description How a page URL is made canonical (docs/api.md "Conventions"). A change renames stored pages to their new canonical URL; a change that would merge two stored pages is refused (422). */
            urls: {
                /** @description Sort query parameters by name (a stable sort: parameters of one name keep their order). */
                sortQueryParameters: boolean;
                /** @description Query parameters to drop (tracking): exact names, or prefixes ending in *; matched ignoring ASCII case. */
                dropQueryParameters: string[];
                /** @description Drop a `?` with nothing after it. */
                dropEmptyQuery: boolean;
                /** @description In path and query: decode escapes of unreserved characters (A-Z a-z 0-9 - . _ ~), upper-case the hex of the others. */
                normalizePercentEncoding: boolean;
                /** @description `example.com.` is `example.com`. */
                dropTrailingDotInHost: boolean;
                /** @description Drop a leading `www.` label from the host (off by default: some sites serve other pages there). */
                dropWww: boolean;
                /** @description `/a/` is `/a` (off by default: some sites serve other pages there). The root path `/` stays. */
                dropTrailingSlash: boolean;
                /** @description `/a//b` is `/a/b` (off by default: some sites serve other pages there). */
                collapseSlashes: boolean;
                /** @description Lower-case the path (off by default: paths are case-sensitive on most servers). The query keeps its case. */
                lowercasePath: boolean;
            };
        };
        /** @description A JSON merge patch of the settings: any subset of the keys; lln, sa, outcomes and urls are merged key by key (a list inside is replaced whole). Unknown keys → 400. */
        SettingsPatch: {
            /** @description Total crawl budget R, crawls per day (1e-9 to 1000000000). */
            budgetCrawlsPerDay?: number;
            /**
             * @description Optimiser objective (docs/math.md 3.1, 3.3, 3.4, 3.5). freshness-renewal: periodic crawling with each page's fitted age law (Poisson where its crawls do not show another).
             * @enum {string}
             */
            objective?: "freshness" | "freshness-periodic" | "harmonic" | "freshness-renewal";
            /**
             * @description How nextCrawlAt is drawn from crawlsPerDay.
             * @enum {string}
             */
            schedule?: "periodic" | "poisson";
            estimator?: components["schemas"]["EstimatorName"];
            /** @description Prior change rate for pages without an estimate; also y_0 of the SA estimator. */
            defaultChangesPerDay?: number;
            /** @description Default lower bound (exploration floor) of every page. */
            minCrawlsPerDay?: number;
            /** @description Default upper bound; null = none. */
            maxCrawlsPerDay?: number | null;
            /** @description Every reported estimate is clipped to at least this. */
            minChangesPerDay?: number;
            /** @description Every reported estimate is clipped to at most this. */
            maxChangesPerDay?: number;
            /** @description Period of the automatic optimiser run. */
            reoptimizeSeconds?: number;
            /** @description Leases hand out at most the budget: a fleet-wide allowance fills at budgetCrawlsPerDay and holds at most this many hours of it, so a fleet back from a pause gets at most this much at once. */
            handOutBurstHours?: number;
            /** @description Observations for unknown URLs register the page (importance 1); false rejects those items. */
            registerUnknownPages?: boolean;
            lln?: {
                /** @description LLN regulariser α_k (docs/math.md 1.2): "1/k", "1/sqrt(k)" or a constant in (0, 1) (a constant is not consistent). */
                alpha?: ("1/k" | "1/sqrt(k)") | number;
            };
            sa?: {
                /** @description SA step exponent γ: η_k = 1/(k+1)^γ (docs/math.md 1.3). */
                gamma?: number;
            };
            outcomes?: {
                /** @description Consecutive 404 answers after which a page is gone. */
                goneAfterNotFound?: number;
                /** @description Consecutive 410 answers after which a page is gone. */
                goneAfterGone?: number;
                /** @description A gone page is fetched again after this many days (a 2xx brings it back); 0 = never again. */
                goneRecheckDays?: number;
                /** @description First retry after a 5xx, a timeout or a network error; the wait doubles with every further failure. */
                retryAfterErrorSeconds?: number;
                /** @description The retry wait stops growing at the larger of this and the page's period. */
                maxRetryIntervalDays?: number;
                /** @description A 301 or 308 with redirectTo registers the target page (with the importance of the source). */
                followRedirects?: boolean;
            };
            urls?: {
                /** @description Sort query parameters by name (a stable sort: parameters of one name keep their order). */
                sortQueryParameters?: boolean;
                /** @description Query parameters to drop (tracking): exact names, or prefixes ending in *; matched ignoring ASCII case. */
                dropQueryParameters?: string[];
                /** @description Drop a `?` with nothing after it. */
                dropEmptyQuery?: boolean;
                /** @description In path and query: decode escapes of unreserved characters (A-Z a-z 0-9 - . _ ~), upper-case the hex of the others. */
                normalizePercentEncoding?: boolean;
                /** @description `example.com.` is `example.com`. */
                dropTrailingDotInHost?: boolean;
                /** @description Drop a leading `www.` label from the host (off by default: some sites serve other pages there). */
                dropWww?: boolean;
                /** @description `/a/` is `/a` (off by default: some sites serve other pages there). The root path `/` stays. */
                dropTrailingSlash?: boolean;
                /** @description `/a//b` is `/a/b` (off by default: some sites serve other pages there). */
                collapseSlashes?: boolean;
                /** @description Lower-case the path (off by default: paths are case-sensitive on most servers). The query keeps its case. */
                lowercasePath?: boolean;
            };
        };
        /** @description The numbers of /metrics as JSON, with rate histograms, optimiser runs, overdue hosts, failed fetches and time series. */
        Stats: {
            /** @description When the snapshot was taken (RFC 3339); snapshots are cached for a few seconds. */
            takenAt: string;
            pages: number;
            /** @description Pages under an unexpired lease. */
            pagesLeased: number;
            /** @description Pages by status (docs/api.md "Fetch outcomes"). */
            pagesByStatus: {
                active: number;
                failing: number;
                gone: number;
                redirected: number;
                /** @description Pages whose content hash changed on every fetch (any status): fix the crawler’s hashing. */
                noisy: number;
            };
            /** @description Due (dueAt ≤ now) and not under an unexpired lease. */
            pagesOverdue: number;
            /** @description How long the most overdue page has been due; 0 when none is. */
            oldestOverdueAgeSeconds: number;
            /** @description Σμ·f(ρ)/Σμ of the current rates under the running schedule (docs/math.md 3.1 Poisson, 3.3 periodic); null without weighted pages. */
            expectedFreshness: number | null;
            /** @enum {string} */
            schedule: "periodic" | "poisson";
            /** @description Budget R from the settings. */
            budgetCrawlsPerDay: number;
            /** @description Σ crawlsPerDay: what the current rates spend of the budget. */
            plannedCrawlsPerDay: number;
            /** @description Crawls reported with crawledAt in the last hour × 24. */
            crawlsPerDayLastHour: number;
            /** @description Totals of the counters of /metrics since this replica started. */
            counters: {
                observations: {
                    accepted: number;
                    duplicate: number;
                    late: number;
                    rejected: number;
                };
                /** @description recrawl_fetches_total: reports not rejected (accepted, late or duplicate) by reported status class. */
                fetchesByStatusClass: {
                    "1xx": number;
                    "2xx": number;
                    "3xx": number;
                    "4xx": number;
                    "5xx": number;
                    none: number;
                };
                changesDetected: number;
                leasesGranted: number;
                leasesExpired: number;
                optimizerRuns: number;
            };
            windowHours: number;
            /** @description Start of the window (exclusive, RFC 3339): windowEnd − windowHours, on the service clock. */
            windowStart: string;
            /** @description End of the window (inclusive, RFC 3339): the service clock when the details were computed. */
            windowEnd: string;
            /** @description The stored multiplier λ and when it was solved. */
            optimizer: {
                lambda: number | null;
                solvedAt: string | null;
            };
            /** @description Pages by estimated changesPerDay (log10 bins, 4 per decade). */
            changeRateHistogram: {
                /** @description bins + 1 log-spaced bin edges, per day; bin i counts rates in [edges[i], edges[i+1]). */
                edgesPerDay: number[];
                counts: number[];
                /** @description Pages with a rate below the first edge (zeros included). */
                below: number;
                /** @description Pages with a rate at or above the last edge. */
                above: number;
                /** @description Pages without the rate. */
                unknown: number;
            };
            /** @description Pages by crawlsPerDay (log10 bins, 4 per decade). */
            crawlRateHistogram: {
                /** @description bins + 1 log-spaced bin edges, per day; bin i counts rates in [edges[i], edges[i+1]). */
                edgesPerDay: number[];
                counts: number[];
                /** @description Pages with a rate below the first edge (zeros included). */
                below: number;
                /** @description Pages with a rate at or above the last edge. */
                above: number;
                /** @description Pages without the rate. */
                unknown: number;
            };
            /** @description The latest optimiser runs, newest first. */
            optimizerRuns: {
                id: string;
                startedAt: string;
                durationMs: number;
                trigger: string;
                objective: string;
                lambda: number | null;
                pages: number;
                pagesCrawled: number;
                budgetCrawlsPerDay: number;
                expectedFreshness: number | null;
                pagesRetimed: number;
            }[];
            /** @description Hosts with the most overdue pages. */
            topOverdueHosts: {
                host: string;
                pagesOverdue: number;
                oldestOverdueAgeSeconds: number;
            }[];
            /** @description Snapshots stored at most once a minute (whenever one is taken, and every minute by the service), averaged into at most 300 buckets over the window. */
            series: {
                bucketSeconds: number;
                points: {
                    at: string;
                    pages: number;
                    pagesOverdue: number;
                    oldestOverdueAgeSeconds: number;
                    expectedFreshness: number | null;
                    budgetCrawlsPerDay: number;
                    plannedCrawlsPerDay: number;
                    crawlsPerDayLastHour: number;
                }[];
            };
            /** @description Every hour of the window by crawl time: crawls stored, changes detected among them and the crawls by reported HTTP status class, from the observation history (0 for hours without crawls). The first hour starts at or before windowStart and counts only crawls after it. */
            crawlActivity: {
                hourStart: string;
                crawls: number;
                changes: number;
                /** @description Crawl reports by the class of the httpStatus the crawler reported (none: reported without one); the status_class label of recrawl_fetches_total. */
                fetchesByStatusClass: {
                    "1xx": number;
                    "2xx": number;
                    "3xx": number;
                    "4xx": number;
                    "5xx": number;
                    none: number;
                };
            }[];
            /** @description Failed fetches (a reported status outside 200…399) in the window by host and status, most first (at most 20 rows). */
            fetchFailures: {
                host: string;
                httpStatus: number;
                /** @description Stored crawls of the host with this status in the window. */
                fetches: number;
                /** @description Distinct pages among them. */
                pages: number;
                lastCrawledAt: string;
            }[];
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    healthz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The process is alive. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Health"];
                };
            };
        };
    };
    readyz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ready: the database is reachable and fully migrated. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Readiness"];
                };
            };
            /** @description Not ready: migrations are pending (a Readiness body), or the database is unreachable (a problem). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Readiness"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listPages: {
        parameters: {
            query?: {
                /** @description Only pages of this host. */
                host?: string;
                /** @description nextCursor of the previous response. */
                cursor?: string;
                /** @description Items per response, default 100; values above 1000 are served as 1000. */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The next pages. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PageList"];
                };
            };
            /** @description Bad host, cursor or limit. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    putPages: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PageBatch"];
            };
        };
        responses: {
            /** @description Every page of the batch is written, with its rate and due time. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PageBatchResult"];
                };
            };
            /** @description Invalid input: errors lists every bad field; nothing was changed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Conflicts with a concurrent change; nothing was changed, retry the request. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More items than MAX_BATCH_ITEMS, or a body larger than BODY_LIMIT_BYTES; nothing was applied. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getPageByUrl: {
        parameters: {
            query: {
                /** @description Absolute http(s) URL of the page. */
                url: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The page. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Page"];
                };
            };
            /** @description Missing or invalid url. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No page with this URL. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getPage: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Page id, as returned in Page.id; an id that names no page is 404. */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The page. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Page"];
                };
            };
            /** @description Invalid input: errors lists every bad field; nothing was changed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No page with this id. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deletePage: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Page id, as returned in Page.id; an id that names no page is 404. */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Invalid input: errors lists every bad field; nothing was changed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No page with this id. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listPageObservations: {
        parameters: {
            query?: {
                /** @description nextCursor of the previous response (an RFC 3339 crawl time). */
                before?: string;
                /** @description Items per response, default 100; values above 1000 are served as 1000. */
                limit?: number;
            };
            header?: never;
            path: {
                /** @description Page id, as returned in Page.id; an id that names no page is 404. */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The next observations. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ObservationList"];
                };
            };
            /** @description Bad before or limit. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No page with this id. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getPageEstimates: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Page id, as returned in Page.id; an id that names no page is 404. */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The estimates. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Estimates"];
                };
            };
            /** @description Invalid input: errors lists every bad field; nothing was changed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No page with this id. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postObservations: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ObservationBatch"];
            };
        };
        responses: {
            /** @description The batch is committed: what became of each item. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ObservationReceipt"];
                };
            };
            /** @description The body does not match the schema; nothing was stored. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Conflicts with a concurrent change; nothing was changed, retry the request. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More items than MAX_BATCH_ITEMS, or a body larger than BODY_LIMIT_BYTES; nothing was applied. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getSettings: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The settings. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Settings"];
                };
            };
            /** @description Invalid input: errors lists every bad field; nothing was changed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    patchSettings: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/merge-patch+json": components["schemas"]["SettingsPatch"];
                "application/json": components["schemas"]["SettingsPatch"];
            };
        };
        responses: {
            /** @description The settings after the change. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Settings"];
                };
            };
            /** @description Unknown key, bad value (docs/api.md "Input limits"), or merged settings that are invalid as a whole; nothing was changed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More items than MAX_BATCH_ITEMS, or a body larger than BODY_LIMIT_BYTES; nothing was applied. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description New URL rules would give two stored pages or host limits one name; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getClock: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The simulated time. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Clock"];
                };
            };
            /** @description Invalid input: errors lists every bad field; nothing was changed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    setClock: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ClockMove"];
            };
        };
        responses: {
            /** @description The simulated time after the move. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Clock"];
                };
            };
            /** @description now is not an RFC 3339 timestamp. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More items than MAX_BATCH_ITEMS, or a body larger than BODY_LIMIT_BYTES; nothing was applied. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    takeLease: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["LeaseRequest"];
            };
        };
        responses: {
            /** @description The lease and its pages (none when nothing is due). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LeaseGrant"];
                };
            };
            /** @description Invalid input: errors lists every bad field; nothing was changed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    releaseLease: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description leaseId from POST /v1/leases */
                leaseId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The lease is released. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LeaseRelease"];
                };
            };
            /** @description leaseId is not a UUID. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No active lease with this id (completed, expired or unknown). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    extendLease: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description leaseId from POST /v1/leases */
                leaseId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["LeaseExtension"];
            };
        };
        responses: {
            /** @description The lease is extended. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LeaseExtended"];
                };
            };
            /** @description leaseId is not a UUID, or the body is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No active lease with this id (completed, expired or unknown). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    releaseLeasePages: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description leaseId from POST /v1/leases */
                leaseId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PagesRelease"];
            };
        };
        responses: {
            /** @description The pages the lease held are released. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PagesReleased"];
                };
            };
            /** @description leaseId is not a UUID, or the body is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getSchedule: {
        parameters: {
            query?: {
                /** @description Items per response, default 100; values above 1000 are served as 1000. */
                limit?: number;
                /** @description RFC 3339: only crawls due up to this time. */
                until?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The upcoming crawls. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Schedule"];
                };
            };
            /** @description Bad limit or until. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    runOptimizer: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The run’s outcome; every page’s rate and due time are stored. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OptimizerRun"];
                };
            };
            /** @description Invalid input: errors lists every bad field; nothing was changed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The pages’ lower bounds need more than the budget or a host’s cap, or the optimiser cannot represent the solution; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listHosts: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The hosts. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HostList"];
                };
            };
            /** @description Invalid input: errors lists every bad field; nothing was changed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    putHost: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Host name as pages carry it (lower case, with a port when not the default). */
                host: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["HostLimits"];
            };
        };
        responses: {
            /** @description The host with its new limits. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Host"];
                };
            };
            /** @description Invalid input: errors lists every bad field; nothing was changed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Conflicts with a concurrent change; nothing was changed, retry the request. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More items than MAX_BATCH_ITEMS, or a body larger than BODY_LIMIT_BYTES; nothing was applied. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteHost: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Host name as pages carry it (lower case, with a port when not the default). */
                host: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The limits are removed. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not a host name. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The host has no limits. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Every metric in the Prometheus text exposition format (version 0.0.4). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
        };
    };
    getStats: {
        parameters: {
            query?: {
                /** @description Window of the time series and crawl activity. */
                hours?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The statistics. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Stats"];
                };
            };
            /** @description hours is not an integer from 1 to 720. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No valid API key: missing, unknown or revoked. */
            401: {
                headers: {
                    /** @description Bearer, with error="invalid_token" for an unknown or revoked key. */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key’s role does not allow this route. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done. */
            429: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error; the service log has the request id. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The database is unavailable; nothing was changed, retry later. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
}
