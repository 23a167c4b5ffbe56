"""
Inverse dynamics by prescribed motion: the three-stage procedure of docs/prescribed.md.

1. Prescribe the tool's path (a path point); record the actuators' coordinates (actuator
   lengths, joint angles) every step.
2. Drive the actuators by the recorded coordinates (cubic splines through them), the tool
   free; record the forces (N) and efforts (N m or N) the actuators develop.
3. Drive the actuators by those forces and efforts (forward simulation); the tool's deviation
   from the prescribed path measures how well the forces reproduce the motion.

Pure Python over the facade; no ROS.  Each stage starts from a new Simulator at the configured
initial state, which must be where the path starts.
"""
from collections import namedtuple

import numpy as np

from ..errors import CommandError
from ..sim.trajectory import CubicSpline

#: Steps stage 1 records beyond the stages' duration (see :func:`run_three_stages`).
RUN_ON = 10
#: What :func:`run_three_stages` returns; arrays have one row per recorded instant.
ThreeStageResult = namedtuple('ThreeStageResult', [
    'time',          # (n + 1,) s, 0 = the initial state
    'path',          # (n + 1, 3) prescribed tool position, world, m
    'tool_stage1',   # (n + 1, 3) tool position in stage 1 (on the path), m
    'coordinates',   # (n + 1, a + j) stage 1's actuator lengths (m) then joint angles (rad/m)
    'tool_stage2',   # (n + 1, 3) tool position in stage 2, m
    'forces',        # (n, a + j) stage 2's actuator forces (N) then joint efforts, per step
    'tool_stage3',   # (n + 1, 3) tool position in stage 3, m
    'deviation',     # (n + 1,) |tool_stage3 - path|, m
    'names',         # actuator names then joint names
    'amplitude',     # largest range of one coordinate of the whole path, m
])


def _tool_position(sim, point):
    return sim.elements.path_points()[point][0]


def _coordinates(sim, actuators, joints):
    lengths = sim.elements.actuator_lengths()
    angles = dict(zip(sim.joint_names, sim.joint_positions()))
    return [lengths[a][0] for a in actuators] + [angles[j] for j in joints]


def _report(progress, stage, k, n, dt):
    if progress is not None and (k == n or k % max(1, n // 10) == 0):
        progress(stage, k, n, k * dt)


def run_three_stages(make_simulator, point, times, path, duration, actuators=(), joints=(),
                     progress=None):
    """
    Run the three stages and return a :class:`ThreeStageResult`.

    Args:
        make_simulator: callable returning a new Simulator at the initial state (each stage
            starts from one); it must declare ``point`` under ``path_points`` and the
            actuators under ``linear_actuators``.
        point: the tool's path point name.
        times: (m,) path sample times, s (from the start).
        path: (m, 3) tool positions, world, m; the first is where the tool is.
        duration: simulated time of each stage, s.
        actuators: linear actuators whose lengths are recorded and then prescribed.
        joints: scalar joints whose angles are recorded and then prescribed.
        progress: optional callable(stage, step, steps, simulated seconds), called every
            tenth of a stage.

    Raises:
        CommandError: no actuator given, or a stage refused its motion (the message says why).
    """
    actuators, joints = list(actuators), list(joints)
    if not actuators and not joints:
        raise CommandError('the procedure needs actuators: name linear actuators (lengths) '
                           'or joints (angles) to record and drive.')
    curve = CubicSpline(times, np.asarray(path, dtype=float))
    sim = make_simulator()
    dt = sim.dt
    n = int(round(duration / dt))
    stamps = np.arange(n + 1) * dt
    target = np.array([curve.evaluate(t) for t in stamps])

    # stage 1: the tool on its path, the actuators' coordinates recorded; RUN_ON steps more
    # than the stages take, so that the clamped end of the splines through them (at rest)
    # lies beyond the last step driven (its influence shrinks ~3.7 times per sample)
    sim.prescribed.path(point, times, path)
    tool1 = [_tool_position(sim, point)]
    coords = [_coordinates(sim, actuators, joints)]
    for k in range(1, n + RUN_ON + 1):
        sim.step(1)
        tool1.append(_tool_position(sim, point))
        coords.append(_coordinates(sim, actuators, joints))
        if k <= n:
            _report(progress, 1, k, n, dt)
    coords = np.array(coords)
    tool1 = tool1[:n + 1]
    recorded = np.arange(n + RUN_ON + 1) * dt

    # stage 2: the actuators along the recorded coordinates, the tool free
    sim = make_simulator()
    if actuators:
        sim.prescribed.lengths(recorded, coords[:, :len(actuators)], actuators)
    if joints:
        sim.prescribed.joints(recorded, coords[:, len(actuators):], joints)
    joint_position = [sim.joint_names.index(j) for j in joints]
    tool2 = [_tool_position(sim, point)]
    forces = []
    for k in range(1, n + 1):
        sim.step(1)
        tool2.append(_tool_position(sim, point))
        pushes = sim.elements.actuator_forces()
        efforts = sim.joint_efforts()
        forces.append([pushes[a] for a in actuators] + [efforts[i] for i in joint_position])
        _report(progress, 2, k, n, dt)
    forces = np.array(forces).reshape(n, len(actuators) + len(joints))

    # stage 3: the actuators driven by the recorded forces and efforts
    sim = make_simulator()
    tool3 = [_tool_position(sim, point)]
    for k in range(n):
        if actuators:
            sim.elements.set_actuator_forces(dict(zip(actuators, forces[k, :len(actuators)])))
        if joints:
            sim.set_joint_efforts(dict(zip(joints, forces[k, len(actuators):])))
        sim.step(1)
        tool3.append(_tool_position(sim, point))
        _report(progress, 3, k + 1, n, dt)
    tool3 = np.array(tool3)
    return ThreeStageResult(
        time=stamps, path=target, tool_stage1=np.array(tool1), coordinates=coords[:n + 1],
        tool_stage2=np.array(tool2), forces=forces, tool_stage3=tool3,
        deviation=np.linalg.norm(tool3 - target, axis=1), names=tuple(actuators + joints),
        amplitude=float(np.max(np.ptp(np.asarray(path, dtype=float), axis=0))))
