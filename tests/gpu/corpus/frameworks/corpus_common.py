# SPDX-License-Identifier: MIT
"""What the corpus' framework programs share: the checks, the rounding that
makes a value print the same natively and through axon, and the exit for a
framework that is not there."""
import importlib
import math
import sys

failed = []


def need(module):
    """Imports MODULE, or exits 77 (skip) saying that it is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        print(f"skip: {module} not importable ({e})")
        sys.exit(77)


def sig(x, digits=4):
    """x to DIGITS significant digits, as text: the same on every run unless
    a nondeterministic reduction moves it across a rounding boundary."""
    x = float(x)
    if x == 0 or not math.isfinite(x):
        return repr(x)
    return f"{x:.{digits}g}"


def check(name, cond, detail=""):
    """Prints NAME: ok or NAME: FAIL (details on stderr); remembers failures."""
    if cond:
        print(f"{name}: ok")
    else:
        failed.append(name)
        print(f"{name}: FAIL")
        print(f"{name}: {detail}", file=sys.stderr)


def done():
    print(f"{'FAIL' if failed else 'PASS'} ({len(failed)} failed)")
    sys.exit(1 if failed else 0)
