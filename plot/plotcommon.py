"""plotcommon.py - what faultline_plot.py (time series) and
faultline_compare.py (two runs' JSON side by side) share: the y-axis
rule and the error both report. Neither of them imports the other's
internals; faultline_plot imports faultline_compare for --compare, and
both import this module, which imports neither."""

import math

# One job's typical rate under 1/LOG_RATIO of another's: on a linear axis
# the slow one is a line on zero, so the axis turns logarithmic.
LOG_RATIO = 100.0

YSCALES = ("auto", "log", "linear")


class PlotError(Exception):
    """Bad input or usage: main() prints the message and exits 2."""


def wants_log(rates):
    """True when some rate is under 1/LOG_RATIO of another (NaNs ignored):
    then a linear axis draws the slow one on its zero line."""
    rates = [r for r in rates if math.isfinite(r)]
    if len(rates) < 2 or max(rates) <= 0:
        return False
    return min(rates) * LOG_RATIO < max(rates)
