-- The page's fitted age law for the distribution-aware objective (docs/math.md 3.5): the gamma-mixed shape β
-- (NULL: Poisson) and the ratio of the fitted law's rate to the scheduling estimate's MLE at the fit. Both
-- are copies of fields of estimator_state, written with it, so that the optimiser run reads them as columns
-- without decoding every page's state. Pages stored before this migration read as Poisson until their next
-- crawl writes them.
ALTER TABLE pages
  ADD COLUMN age_shape double precision CHECK (age_shape > 0),
  ADD COLUMN age_shape_rate_ratio double precision CHECK (age_shape_rate_ratio > 0);
