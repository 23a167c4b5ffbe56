"""
Which formulation simulates a robot: the checks of ``solver.formulation`` and its integrators.

Run at load time, before an engine is built: what a formulation does not simulate is one
ConfigError naming the key and the fix (physics/tree_engine.py and docs/tree.md for the tree
formulation).
"""
import math

from ..errors import ConfigError


def check_formulation(model, config):
    """
    Refuse what the configured formulation does not simulate; return warnings for the log.

    Args:
        model: RobotModel.
        config: SimConfig.

    Returns:
        list of str: what the formulation leaves out without refusing the robot.

    Raises:
        ConfigError: one message naming the key and the fix.
    """
    solver = config.solver
    if solver.formulation != 'tree':
        if solver.integrator != 'semi_implicit_euler':
            raise ConfigError(f'{config.source}: solver.integrator {solver.integrator} needs '
                              'solver.formulation: tree; set solver.integrator: '
                              'semi_implicit_euler or solver.formulation: tree.')
        return []
    check_tree_config(model, config)
    limited = [j.name for j in model.joints if j.type in ('revolute', 'prismatic')
               and (math.isfinite(j.lower) or math.isfinite(j.upper))]
    if limited and solver.integrator == 'rk4':
        return [f'solver.integrator rk4 does not enforce joint position limits '
                f'({", ".join(limited)} have some); use solver.integrator: '
                f'semi_implicit_euler or symplectic_euler to enforce them.']
    return []


def check_tree_config(model, config):
    """
    Refuse, with one ConfigError naming the key and the fix, what tree mode does not simulate.

    Args:
        model: RobotModel.
        config: SimConfig with ``solver.formulation == 'tree'``.

    Raises:
        ConfigError: with RK4 drives, contacts, joint friction, mimic joints, closed loops,
            grasps and enforced velocity limits (RK4 solves no rows).  A scalar loop joint's
            friction, damping, limits, speed limit, efforts and drive, and a spherical loop
            joint's friction, are rows between its bodies (physics/tree_rows.py,
            ``loop_axis_rows``, ``loop_friction_rows``).
    """
    src = config.source
    fix = 'or use solver.formulation: maximal'

    def refuse(what, key, how):
        raise ConfigError(f'{src}: solver.formulation tree does not simulate {what} (key '
                          f"'{key}'); {how}, {fix}.")

    rk4 = config.solver.integrator == 'rk4'
    if rk4 and model.drives:
        refuse('drives with the rk4 integrator', 'solver.integrator',
               'use integrator semi_implicit_euler or symplectic_euler, or remove the drives')
    if rk4 and model.shapes:
        refuse('contacts with the rk4 integrator', 'solver.integrator',
               'use integrator semi_implicit_euler or symplectic_euler, or set '
               'ground.enabled: false and remove the scene and collision shapes')
    if rk4 and config.grasps:
        refuse('grasps with the rk4 integrator', 'solver.integrator',
               'use integrator semi_implicit_euler or symplectic_euler')
    if rk4 and (config.loop_joints or any(j.loop and not j.element for j in model.joints)):
        refuse('closed kinematic loops with the rk4 integrator', 'solver.integrator',
               'use integrator semi_implicit_euler or symplectic_euler')
    for j in model.joints:
        if j.mimic is not None and rk4:
            refuse(f'mimic joints with the rk4 integrator ({j.name!r})', 'solver.integrator',
                   'use integrator semi_implicit_euler or symplectic_euler')
        static = j.static_friction if j.static_friction is not None else j.friction
        friction = j.friction > 0.0 or static > 0.0
        if friction and rk4:
            refuse(f'joint Coulomb friction ({j.name!r}, {j.type} with rk4)',
                   f'joints.{j.name}.friction',
                   f'set joints: {{{j.name}: {{friction: 0, static_friction: 0}}}}')
    if config.limits.enforce_velocity and rk4:
        refuse('enforced velocity limits with the rk4 integrator', 'limits.enforce_velocity',
               'set limits.enforce_velocity: false')
