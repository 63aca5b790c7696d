"""The bracketed root finder the jitter-tolerance searches share (the CLI's
``serdes jtol`` and the statistical lock-point weighting), in its own module so
neither imports the other."""
import math


def illinois(g, lo: float, g_lo: float, hi: float, g_hi: float, log: bool,
             rtol: float = 0.01, tol: float = 0.05, iters: int = 30) -> float:
    """Illinois regula falsi for the root of ``g`` (log10 BER / target: <= 0 passes)
    in a bracket with g(lo) <= 0 < g(hi): the secant in the amplitude (``log``: in its
    logarithm), the bisection when it leaves the bracket, the kept end's value halved
    when the same end moves twice. Stops when the bracket is within ``rtol`` (hi - lo
    < rtol hi; ``log``: hi / lo < 1 + rtol) or |g| < ``tol`` (12 % in BER); returns that
    point when |g| < ``tol``, else the bracket's passing end."""
    x, gx = lo, g_lo
    side = 0
    for _ in range(iters):
        if log:
            t = math.exp(math.log(hi) - g_hi * (math.log(hi) - math.log(lo)) / (g_hi - g_lo))
            x = t if lo < t < hi else math.sqrt(lo * hi)
        else:
            x = hi - g_hi * (hi - lo) / (g_hi - g_lo)
            if not lo < x < hi:
                x = 0.5 * (lo + hi)
        gx = g(x)
        if gx > 0:
            hi, g_hi = x, gx
            if side == -1:
                g_lo /= 2
            side = -1
        else:
            lo, g_lo = x, gx
            if side == 1:
                g_hi /= 2
            side = 1
        if (hi / lo < 1 + rtol if log else hi - lo < rtol * hi) or abs(gx) < tol:
            break
    return x if abs(gx) < tol else lo
