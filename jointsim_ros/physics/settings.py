"""
Engine settings: dataclasses with defaults and a unit on every field.

Each field is one key of the config schema (``solver.<field>``): its unit, meaning and check sit
in the field's metadata (jointsim_ros/schema.py), from which the config loader, the generated
``config/default.yaml`` and the docs table are made.
"""
from dataclasses import dataclass

from ..schema import boolean, choice, integer, number, setting


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

    iterations: int = setting(20, 'count', 'cap on velocity iterations per step', integer(1))
    tolerance: float = setting(
        1e-9, 'N s or N m s',
        'stop iterating when no accumulated impulse changes by more than this',
        number(0.0))
    time_budget: float = setting(0.0, 's', 'wall-clock budget of one solve; 0 means no budget',
                                 number(0.0))
    position_iterations: int = setting(4, 'count', 'cap on position-projection passes per step',
                                       integer(0))
    position_tolerance: float = setting(
        1e-9, 'm or rad', 'stop projecting when every joint position error is below this',
        number(0.0))
    warm_start: bool = setting(True, 'true/false',
                               "start each solve from the previous step's impulses", boolean)
    formulation: str = setting(
        'maximal', 'maximal | tree',
        'maximal coordinates (any robot) or exact tree joints in generalized coordinates',
        choice('maximal', 'tree'),
        note='maximal: bodies and constraint rows, any robot; tree: generalized coordinates '
             'with exact joints for tree-shaped robots (the O(n) articulated-body step, '
             '`docs/tree.md`; contacts, loops, linear actuators, sensors, mimic joints, joint '
             'Coulomb friction and enforced velocity limits are refused at load; position '
             'limits are not enforced). The iteration and position keys apply to `maximal` only')
    integrator: str = setting(
        'semi_implicit_euler', 'semi_implicit_euler | symplectic_euler | rk4',
        'time integrator; the last two only with formulation tree (docs/tree.md)',
        choice('semi_implicit_euler', 'symplectic_euler', 'rk4'),
        note='`symplectic_euler` (the variational step in generalized impulses: bounded energy '
             'error) and `rk4` (reference runs, four recursions per step, damping explicit, no '
             'drives) need `formulation: tree` (`docs/tree.md`)')
