"""Engine settings: dataclasses with defaults and a unit on every field."""
from dataclasses import dataclass


@dataclass(frozen=True)
class SolverSettings:
    """
    Sequential-impulse solver settings (config key ``solver``).

    Attributes:
        iterations: cap on velocity iterations per step (count).  Default 20.
        tolerance: stop when the largest change of any accumulated impulse in one iteration is
            below this (N s for forces, N m s for torques).  Default 1e-9.
        time_budget: wall-clock budget of one solve, s; 0 means no budget.  Default 0.
        position_iterations: cap on position-projection passes per step (count).  Default 4.
        position_tolerance: stop projecting when every joint position error is below this
            (m for anchors, rad for orientations).  Default 1e-9.
        warm_start: start each solve from the previous step's accumulated impulses.  Default True.
        formulation: 'maximal' (bodies and constraint rows, the sequential-impulse solver) or
            'tree' (generalized coordinates, the O(n) articulated-body step: docs/tree.md).
            Default 'maximal'.
        integrator: 'semi_implicit_euler' (both formulations), 'symplectic_euler' or 'rk4'
            (tree formulation only).  Default 'semi_implicit_euler'.
    """

    iterations: int = 20
    tolerance: float = 1e-9
    time_budget: float = 0.0
    position_iterations: int = 4
    position_tolerance: float = 1e-9
    warm_start: bool = True
    formulation: str = 'maximal'
    integrator: str = 'semi_implicit_euler'
