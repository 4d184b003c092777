"""Growth fits (claim 6, the scaling figure), read from here by the figures and the report. Their
one home stays `rbrepro/sweep/growth.py`: REPRODUCTION.md names that file as where they are fitted."""

from rbrepro.sweep.growth import (  # noqa: F401 - re-exported
    COSTS,
    LINEAR_SLOPE,
    Exponent,
    exponent_table,
    exponents,
    fit_exponent,
    growth_kind,
    medians,
    series,
    training_in_R,
)
