"""
Print the contact and force-torque sensor figures that docs/contacts.md and docs/sensors.md state.

The scenarios are those of test/test_contacts.py and test/test_sensors.py (same robots, settings
and durations; the standing biped, ANYmal C and the swinging arm are the tests' own builders);
the tests assert a bound, this prints the value.  One run each: these are not timings.

Run from a checkout: PYTHONPATH=. .venv/bin/python bench/bench_scenario_values.py
"""
import importlib
import math
from pathlib import Path
import sys

from jointsim_ros.rotations import quat_to_matrix
import numpy as np

ROOT = Path.cwd()
sys.path[:0] = [str(ROOT), str(ROOT / 'test')]
tc = importlib.import_module('test_contacts')
ts = importlib.import_module('test_sensors')

G = 9.81


def wrench(sim, name):
    """Return a sensor's last reading on either facade."""
    if hasattr(sim, 'sensors') and hasattr(sim.sensors, 'wrench'):
        return sim.sensors.wrench(name)
    return sim.wrench(name)


def show(name, value):
    """Print one figure."""
    print(f'{name}\t{value:.4g}', flush=True)


def rebound(e, h=1.0, r=0.05):
    """Return apex / (e^2 h) - 1 of a ball dropped from h."""
    sim = tc.scene({'ball': {'shape': 'sphere', 'radius': r, 'mass': 0.5, 'restitution': e,
                             'pose': {'position': [0.0, 0.0, h + r]}}})
    bounced, apex = False, 0.0
    while sim.time < 2.5:
        sim.step(1)
        z, vz = sim.link_pose('ball')[0][2] - r, sim.link_twist('ball')[0][2]
        bounced = bounced or vz > 0
        if bounced:
            apex = max(apex, z)
            if vz < 0:
                break
    return apex / (e * e * h) - 1.0


def elastic_apexes():
    """Return (number of apexes, max - min apex in m) of an e = 1 ball over 3 s."""
    sim = tc.scene({'ball': {'shape': 'sphere', 'radius': 0.05, 'mass': 0.5, 'restitution': 1.0,
                             'pose': {'position': [0.0, 0.0, 0.55]}}})
    apex, z_prev, rising = [], 0.55, False
    while sim.time < 3.0:
        sim.step(1)
        z = sim.link_pose('ball')[0][2]
        if rising and z <= z_prev:
            apex.append(z_prev)
        rising, z_prev = z > z_prev, z
    return len(apex), max(apex) - min(apex)


def sliding(mu, v0):
    """Return the relative errors of the stopping distance and time of a sliding block."""
    sim = tc.scene({'block': tc.box(size=(0.2, 0.2, 0.1), position=(0.0, 0.0, 0.05),
                                    friction=mu, linear_velocity=[v0, 0.0, 0.0])})
    while np.linalg.norm(sim.link_twist('block')[0]) > 1e-9 and sim.time < 5.0:
        sim.step(1)
    distance = sim.link_pose('block')[0][0] / (v0 ** 2 / (2 * mu * G)) - 1.0
    return distance, sim.time / (v0 / (mu * G)) - 1.0


def incline(ratio, mu=0.4):
    """Return the travel over 1 s (stick) or its relative error against the analytic slide."""
    theta = math.atan(ratio * mu)
    sim = tc.scene({'block': tc.box(size=(0.2, 0.2, 0.05), position=(0.0, 0.0, 0.025),
                                    friction=mu)},
                   gravity=[G * math.sin(theta), 0.0, -G * math.cos(theta)])
    sim.step(200)
    x0, v0 = sim.link_pose('block')[0][0], sim.link_twist('block')[0][0]
    sim.step(1000)
    moved = sim.link_pose('block')[0][0] - x0
    if ratio < 1.0:
        return moved
    accel = G * (math.sin(theta) - mu * math.cos(theta))
    return moved / (v0 + 0.5 * accel) - 1.0


def rolling():
    """Return v(1 s) / analytic - 1 of a ball rolling under rolling friction."""
    r, mu_r, v0 = 0.1, 0.002, 1.0
    sim = tc.scene({'ball': {'shape': 'sphere', 'radius': r, 'mass': 1.0,
                             'rolling_friction': mu_r, 'pose': {'position': [0.0, 0.0, r]},
                             'linear_velocity': [v0, 0.0, 0.0],
                             'angular_velocity': [0.0, v0 / r, 0.0]}})
    sim.step(1000)
    return sim.link_twist('ball')[0][0] / (v0 - mu_r * G / (r * 1.4)) - 1.0


def spinning():
    """Return w(0.1 s) / analytic - 1 of a sphere spinning under spinning friction."""
    r, m, mu_s, w0 = 0.05, 0.3, 0.01, 20.0
    sim = tc.scene({'top': {'shape': 'sphere', 'radius': r, 'mass': m, 'spinning_friction': mu_s,
                            'pose': {'position': [0.0, 0.0, r]},
                            'angular_velocity': [0.0, 0.0, w0]}})
    sim.step(100)
    return sim.link_twist('top')[1][2] / (w0 - mu_s * m * G / (0.4 * m * r * r) * 0.1) - 1.0


def box_at_rest():
    """Return (movement over 10 s in m, sum of normal forces / weight - 1)."""
    sim = tc.scene({'box': tc.box(position=(0.0, 0.0, 0.15))})
    sim.step(1000)
    start = sim.link_pose('box')[0]
    sim.step(10000)
    moved = np.linalg.norm(sim.link_pose('box')[0] - start)
    return moved, sum(c.normal_force for c in sim.contacts()) / G - 1.0


def quadruped_feet():
    """Return the largest horizontal foot movement (m) of ANYmal C standing 10 s, and Fn/W - 1."""
    sim, stand, feet = tc.quadruped_on_the_ground()
    moved = tc.hold_pose(sim, stand, 10.0, kp=300.0, kd=8.0, record=feet)
    slip = max(np.linalg.norm((end - start)[:2]) for start, end in moved.values())
    return slip, sum(c.normal_force for c in sim.contacts()) / tc.weight(sim) - 1.0


def sliding_friction_force():
    """Return |friction force + mu m g x| of a sliding block (N)."""
    block = tc.scene({'block': tc.box(size=(0.2, 0.2, 0.1), position=(0.0, 0.0, 0.05),
                                      friction=0.5, linear_velocity=[1.0, 0.0, 0.0])})
    block.step(20)
    friction = sum(c.friction_force for c in block.contacts())
    return np.linalg.norm(friction - np.array([-0.5 * G, 0.0, 0.0]))


def held_arm():
    """Return the largest relative error of the held arm's wrist and elbow readings."""
    sim = ts.held_arm({'wrist_ft': {'joint': 'wrist', 'rate': 0},
                       'elbow_ft': {'joint': 'elbow', 'rate': 0}})
    worst = 0.0
    for sensor, point_link, distal in (('wrist_ft', 'hand', ['hand']),
                                       ('elbow_ft', 'fore', ['fore', 'hand'])):
        point, quat = sim.link_pose(point_link)
        force, torque = ts.weight_wrench(sim, distal, point, quat)
        reading = wrench(sim, sensor)
        worst = max(worst, np.max(np.abs(reading[:3] - force)) / np.linalg.norm(force),
                    np.max(np.abs(reading[3:] - torque)) / np.linalg.norm(torque))
    return worst


def swinging_arm():
    """Return the largest RMS error / RMS scale of the swinging arm against Newton-Euler."""
    rms_error, _, scale = ts.swinging_arm_errors()
    return float(np.max(rms_error / scale))


def foot_sensors():
    """Return the largest |ankle reading / (ground push - foot weight) - 1| of the biped."""
    sim = ts.standing_biped_with_ankle_sensors()
    worst = 0.0
    for side in 'lr':
        foot = f'{side}_foot'
        pressed = sum(c.normal_force for c in sim.contacts() if c.link_a == foot)
        foot_mass = sim.model.bodies[sim.model.links[foot].body].mass
        force = quat_to_matrix(sim.link_pose(foot)[1]) @ wrench(sim, f'{side}_ankle_ft')[:3]
        worst = max(worst, abs(force[2] / (pressed - foot_mass * G) - 1.0))
    return worst


def main():
    """Print every figure, name and value, tab-separated."""
    for e in (0.5, 0.8):
        show(f'rebound e={e}: apex / (e^2 h) - 1', rebound(e))
    count, spread = elastic_apexes()
    show(f'elastic ball: apex max - min over {count} bounces, m', spread)
    for mu, v0 in ((0.5, 2.0), (0.2, 1.0)):
        distance, time = sliding(mu, v0)
        show(f'sliding block mu={mu} v0={v0}: distance / (v0^2 / 2 mu g) - 1', distance)
        show(f'sliding block mu={mu} v0={v0}: stop time / (v0 / mu g) - 1', time)
    show('sliding block: |friction force - (-mu m g)|, N', sliding_friction_force())
    show('incline at 0.95 mu: travel over 1 s, m', incline(0.95))
    show('incline at 1.05 mu: travel / analytic - 1', incline(1.05))
    show('rolling ball: v(1 s) / analytic - 1', rolling())
    show('spinning sphere: w(0.1 s) / analytic - 1', spinning())
    moved, load = box_at_rest()
    show('box at rest: movement over 10 s, m', moved)
    show('box at rest: normal forces / weight - 1', load)
    slip, load = quadruped_feet()
    show('ANYmal C standing 10 s under PD: largest foot slip, m', slip)
    show('ANYmal C: normal forces / weight - 1', load)
    show('held arm: largest sensor error / |weight or moment|', held_arm())
    show('swinging arm: largest RMS error / RMS of the Newton-Euler wrench', swinging_arm())
    show('biped ankle sensors: largest |reading / (push - foot weight) - 1|', foot_sensors())


if __name__ == '__main__':
    main()
