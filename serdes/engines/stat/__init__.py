"""Statistical engine: the slicer-input distribution of each PAM level, hence BER to 1e-15
and below, bathtubs and statistical eyes, from the same Link as the pulse engine.

Modules: :mod:`~serdes.engines.stat.distribution` (the per-level distribution and its
error rates), :mod:`~serdes.engines.stat.jitter` (SJ/DD quadrature),
:mod:`~serdes.engines.stat.engine` (:class:`StatisticalEngine`: response, noise,
distribution, BER), :mod:`~serdes.engines.stat.views` (bathtubs, eye, eye openings),
:mod:`~serdes.engines.stat.results` (the returned data),
:mod:`~serdes.engines.stat.clip` (ADC clip probability),
:mod:`~serdes.engines.stat.error_propagation` (DFE error-propagation Markov model),
:mod:`~serdes.engines.stat.rj` (random jitter as a data-dependent, skewed noise).
"""

from serdes.engines.stat.distribution import (SlicerDistribution, distribution_from_cursors,
                                              eye_names, gray_bit_errors)
from serdes.engines.stat.engine import StatisticalEngine
from serdes.engines.stat.results import (DEFAULT_TARGETS, MAP_FLOOR, Bathtub, EyeOpening,
                                         StatBer, StatEye)

__all__ = ["DEFAULT_TARGETS", "MAP_FLOOR", "Bathtub", "EyeOpening", "SlicerDistribution",
           "StatBer", "StatEye", "StatisticalEngine", "dfe_error_propagation",
           "distribution_from_cursors", "eye_names", "gray_bit_errors"]


def __getattr__(name):
    """``dfe_error_propagation`` is imported when first asked for (a run's text summary,
    which prints the statistical BER alone, does not load its module)."""
    if name == "dfe_error_propagation":
        from serdes.engines.stat.error_propagation import dfe_error_propagation

        return dfe_error_propagation
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
