"""Scenarios for test_sweep.py: a quick analytic one and one that raises for some values."""
import math

import numpy as np


def falling_ball(params, seed):
    """Drop height h, s: return the fall time sqrt(2 h / g) and a seeded draw."""
    if params.get('height', 1.0) < 0.0:
        raise ValueError(f'height {params["height"]} is below the ground')
    rng = np.random.default_rng(seed)
    return {'fall_time': math.sqrt(2.0 * params.get('height', 1.0) / 9.81),
            'draw': float(rng.random())}
