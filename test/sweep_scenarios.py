"""Scenarios for test_sweep.py: an analytic one, a slow one, one that ends its worker."""
import math
import os
import time

import numpy as np


def falling_ball(params, seed):
    """Drop height h, s: return the fall time sqrt(2 h / g) and a seeded draw."""
    if params.get('height', 1.0) < 0.0:
        raise ValueError(f'height {params["height"]} is below the ground')
    rng = np.random.default_rng(seed)
    return {'fall_time': math.sqrt(2.0 * params.get('height', 1.0) / 9.81),
            'draw': float(rng.random())}


def slow_ball(params, seed):
    """falling_ball after ``pause`` s of wall time (default 0.5): a sweep to interrupt."""
    time.sleep(params.get('pause', 0.5))
    return falling_ball(params, seed)


def dying_ball(params, seed):
    """falling_ball, but a negative height ends the worker's process (as a segfault would)."""
    if params.get('height', 1.0) < 0:
        os._exit(3)
    return falling_ball(params, seed)
