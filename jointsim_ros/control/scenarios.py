"""
Scenarios for parameter sweeps (``jointsim_sweep``, docs/sweep.md): one trial each.

A scenario is a function ``scenario(params, seed, cache) -> dict``: ``params`` maps parameter
names to numbers, ``seed`` is the trial's seed, ``cache`` is a dict the worker keeps between its
trials (a loaded Simulator, a controller), and the result is a flat dict of outcomes (numbers,
booleans or strings).  ``PARAMETERS`` on the function lists its parameters with their default,
unit and meaning; a sweep's ``--param`` names are checked against it.  The same parameters and
seed give the same outcomes whatever the worker ran before (each trial starts from a reset).

Built in:
- :func:`humanoid_push`: the bundled humanoid's balancing walk pushed once at the pelvis.
- :func:`arm_payload`: the bundled arm carrying a payload at its flange on its drives' servo
  loops, following a sine in every joint.
"""
import math

import numpy as np

from .balance import BalancingWalkingController, run_closed_loop, sensor_measurements
from .walking import fallen, GaitSettings
from .. import resources
from ..description import load_model
from ..sim.simulator import Simulator


class _Fallen(Exception):
    """Ends a trial early: the robot has fallen."""


def humanoid_push(params, seed, cache):
    """
    Push the walking humanoid once; return whether it fell and where it went.

    Outcomes: ``fell`` (bool), ``fell_at`` (s, NaN when it stood), ``walked`` (m, pelvis x),
    ``lateral`` (m, pelvis y).
    """
    p = {name: spec[0] for name, spec in humanoid_push.PARAMETERS.items()}
    p.update(params)
    steps = int(round(p['steps']))
    key = ('humanoid', steps)
    if key not in cache:
        model, config = load_model(resources.share_file('urdf', 'jointsim_humanoid.urdf.xacro'),
                                   resources.share_file('config', 'jointsim_humanoid.yaml'))
        settings = GaitSettings.for_steps(steps)
        controller = BalancingWalkingController(model, config, settings)
        cache[key] = (Simulator(model, config), controller)
    sim, controller = cache[key]
    sim.reset()
    controller.restart()
    angle = math.radians(p['direction'])
    force = p['force'] * np.array([math.cos(angle), math.sin(angle), 0.0])
    start = sim.link_pose('pelvis')[0].copy()
    fell = [None]

    def on_step(sim, t):
        pushing = p['time'] <= t + 1e-9 < p['time'] + p['duration']
        sim.set_link_wrench('pelvis', force if pushing else np.zeros(3))
        where, quat = sim.link_pose('pelvis')
        if fallen(start[2], where[2], quat[1], quat[2]):
            fell[0] = t
            raise _Fallen()
    try:
        run_closed_loop(sim, controller, controller.duration() + 1.0, sensor_measurements,
                        on_step=on_step)
    except _Fallen:
        pass
    sim.set_link_wrench('pelvis', np.zeros(3))
    where = sim.link_pose('pelvis')[0]
    return {'fell': fell[0] is not None,
            'fell_at': math.nan if fell[0] is None else float(fell[0]),
            'walked': float(where[0] - start[0]), 'lateral': float(where[1] - start[1])}


#: name -> (default, unit, meaning).
humanoid_push.PARAMETERS = {
    'force': (100.0, 'N', 'push at the pelvis'),
    'direction': (90.0, 'deg', 'push direction in the world: 0 forward (+x), 90 left (+y)'),
    'time': (3.0, 's', 'when the push starts, from the start of the walk'),
    'duration': (0.1, 's', 'how long the push lasts'),
    'steps': (6.0, 'count', 'steps of the walk (0 stands)'),
}


def arm_payload(params, seed, cache):
    """
    Carry a payload on the bundled arm's servo loops; return how well it tracks.

    The payload is a solid sphere (radius 0.05 m) fixed to the flange (tool0), so each mass is
    its own model: a worker keeps the parsed description and, for each mass it has met, its
    loaded Simulator, reset at the start of every trial (a grid over masses and other
    parameters builds each mass once per worker).  Every joint follows ``home + amplitude
    sin(2 pi t / period + i pi / 4)`` for ``seconds``, blended in over the first second.
    Outcomes: ``rms_error`` and ``max_error`` (rad, over every joint after the first
    second), ``max_current`` (A).
    """
    p = {name: spec[0] for name, spec in arm_payload.PARAMETERS.items()}
    p.update(params)
    if 'arm' not in cache:
        from ..description.config import config_data
        from ..description.urdf import parse_urdf
        description = parse_urdf(str(resources.share_file(*resources.DEFAULT_ROBOT)))
        cache['arm'] = (description.xml, config_data(str(resources.share_file(
            *resources.DEFAULT_CONFIG))))
    xml, config = cache['arm']
    mass = max(float(p['mass']), 1e-6)
    if ('arm', mass) not in cache:
        inertia = 0.4 * mass * 0.05 ** 2
        payload = (f'<link name="payload"><inertial><origin xyz="0 0 0.05"/>'
                   f'<mass value="{mass!r}"/><inertia ixx="{inertia!r}" ixy="0" ixz="0" '
                   f'iyy="{inertia!r}" iyz="0" izz="{inertia!r}"/></inertial></link>'
                   '<joint name="payload_mount" type="fixed"><parent link="tool0"/>'
                   '<child link="payload"/></joint></robot>')
        cache['arm', mass] = Simulator(*load_model(xml.replace('</robot>', payload),
                                                   dict(config)))
    sim = cache['arm', mass]
    sim.reset()
    home = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0])
    phase = np.arange(7) * math.pi / 4
    names = list(sim.joint_names)
    sim.set_joint_state(dict(zip(names, home)))
    dt = sim.dt
    errors, currents = [], []
    for k in range(int(round(p['seconds'] / dt))):
        t = k * dt
        blend = min(1.0, t)
        target = home + blend * p['amplitude'] * np.sin(2 * math.pi * t / p['period'] + phase)
        if k % 5 == 0:
            sim.set_servo_targets(positions=dict(zip(names, target)))
        sim.step(1)
        if t >= 1.0:
            errors.append(sim.joint_positions() - target)
            currents.append(max(abs(sim.drive_state(n)['current']) for n in names))
        if sim.diverged:
            break
    errors = np.array(errors)
    return {'rms_error': float(np.sqrt(np.mean(errors ** 2))),
            'max_error': float(np.abs(errors).max()), 'max_current': float(max(currents))}


arm_payload.PARAMETERS = {
    'mass': (1.0, 'kg', 'payload at the flange'),
    'amplitude': (0.4, 'rad', 'sine amplitude of every joint'),
    'period': (4.0, 's', 'sine period'),
    'seconds': (3.0, 's', 'simulated time'),
}

#: The built-in scenarios by their command-line names.
SCENARIOS = {'humanoid-push': humanoid_push, 'arm-payload': arm_payload}
