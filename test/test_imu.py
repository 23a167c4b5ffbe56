"""
IMUs against rigid-body kinematics worked out here, and their noise against its settings.

A reading is the sensor frame's orientation in the world, its angular velocity and its
specific force (the acceleration of its point less gravity), both in the sensor's axes
(docs/sensors.md, "IMU").  The expected values below come from the motion alone: a body at
rest feels g upwards, a falling one nothing, a point turning at w about an axis at distance r
w^2 r towards it.
"""
import math

from jointsim_ros import Simulator
from jointsim_ros.errors import CommandError, ConfigError
from jointsim_ros.rotations import quat_multiply, quat_to_matrix, rpy_to_matrix
import numpy as np
import pytest
from robots import box_inertial, collision_box, free_box, inertial, joint, link, robot

G = 9.81


#: The physical scenarios run in both formulations (the IMU reads the bodies' states).
both = pytest.mark.parametrize('formulation', ['maximal', 'tree'])


def same_rotation(q, r):
    """Return True when the unit quaternion q (wxyz) is the rotation matrix r."""
    return np.allclose(quat_to_matrix(q), r, atol=1e-9)


def resting_box(imu, formulation='maximal'):
    """Return a 2 kg box settled on the ground, turned 0.4 rad about z, with one IMU."""
    urdf = robot('box', link('box', box_inertial(2.0, (0.3, 0.2, 0.1))
                             + collision_box((0.3, 0.2, 0.1))))
    sim = Simulator.from_urdf(urdf, {
        'base': 'floating', 'base_pose': {'position': [0.0, 0.0, 0.05], 'rpy': [0, 0, 0.4]},
        'imu_sensors': {'imu': imu}, 'solver': {'formulation': formulation}})
    sim.step(1500)
    return sim


@both
def test_at_rest_it_reads_gravity_upwards_in_its_own_tilted_axes(formulation):
    mount = {'position': [0.1, -0.05, 0.04], 'rpy': [0.3, -0.2, 0.5]}
    sim = resting_box({'link': 'box', 'pose': mount, 'rate': 0}, formulation)
    reading = sim.sensors.imu('imu')
    box_pos, box_quat = sim.link_pose('box')
    frame = quat_to_matrix(box_quat) @ rpy_to_matrix(mount['rpy'])
    assert same_rotation(reading[:4], frame)
    assert np.abs(reading[4:7]).max() < 1e-4                              # rad/s
    assert np.allclose(reading[7:], frame.T @ [0.0, 0.0, G], atol=2e-3)   # m/s^2
    assert np.linalg.norm(reading[7:]) == pytest.approx(G, abs=2e-3)
    # no noise configured: the sample is the exact reading
    assert np.array_equal(reading, sim.sensors.measure('imu'))


@both
def test_in_free_fall_spinning_it_reads_no_force_and_the_spin(formulation):
    # torque-free spin about the box's axis of largest inertia: w stays constant in the world
    sim = Simulator.from_urdf(free_box(2.0, (0.1, 0.2, 0.3)), {
        'base': 'floating', 'ground': {'enabled': False},
        'solver': {'formulation': formulation},
        'imu_sensors': {'imu': {'link': 'box', 'rate': 0,
                                'pose': {'rpy': [0.0, 0.0, math.pi / 2]}}}})
    spin = np.array([0.0, 0.0, 3.0])
    sim.set_base_state([0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 2.0], spin)
    sim.step(250)
    reading = sim.sensors.imu('imu')
    frame = quat_to_matrix(sim.link_pose('box')[1]) @ rpy_to_matrix([0, 0, math.pi / 2])
    assert np.allclose(reading[7:], 0.0, atol=1e-9)                      # falling: nothing
    assert np.allclose(reading[4:7], frame.T @ spin, atol=1e-9)
    assert same_rotation(reading[:4], frame)


@both
def test_turning_at_an_offset_it_reads_the_rate_and_w_squared_r_towards_the_axis(formulation):
    w, r = 10.0, 0.2
    urdf = robot('turntable', link('base'), link('arm', inertial(1.0, 0.01, 0.02, 0.03)),
                 joint('spin', 'continuous', 'base', 'arm', axis='0 0 1'))
    mount = {'position': [r, 0.0, 0.05], 'rpy': [0.0, 0.0, 0.7]}
    sim = Simulator.from_urdf(urdf, {'imu_sensors': {'imu': {'link': 'arm', 'pose': mount}},
                                     'solver': {'formulation': formulation}})
    sim.set_joint_state({'spin': 0.0}, {'spin': w})
    sim.step(1234)
    assert sim.joint_velocities()[0] == pytest.approx(w, rel=1e-9)        # nothing slows it
    reading = sim.sensors.measure('imu')
    angle = sim.joint_positions()[0]
    frame = rpy_to_matrix([0.0, 0.0, angle + 0.7])
    towards_axis = -np.array([math.cos(angle), math.sin(angle), 0.0])
    expected = frame.T @ (w * w * r * towards_axis + [0.0, 0.0, G])
    assert np.allclose(reading[4:7], [0.0, 0.0, w], atol=1e-9)
    # the step's change of velocity over dt: w^2 r sin(w dt / 2) / (w dt / 2), 4e-6 short
    assert np.allclose(reading[7:], expected, atol=1e-3 * w * w * r)
    assert same_rotation(reading[:4], frame)
    # sampled at its default rate, 100 Hz: 123 samples in 1.234 s, the last at 1.23 s
    stamp, _, count = sim.sensors.sample('imu')
    assert count == 123 and stamp == pytest.approx(1.23)


def welded_imu(noise, samples):
    """Return (sim, exact reading, (samples, 10) noisy readings) of an IMU on a fixed base."""
    urdf = robot('post', link('base', box_inertial(1.0, (0.1, 0.1, 0.1))))
    sim = Simulator.from_urdf(urdf, {
        'base_pose': {'rpy': [0.2, 0.0, 0.0]},
        'imu_sensors': {'imu': {'link': 'base', 'rate': 1000.0, 'noise': noise}}})
    out = np.empty((samples, 10))
    for k in range(samples):
        sim.step(1)
        out[k] = sim.sensors.imu('imu')
    return sim, sim.sensors.measure('imu'), out


def test_white_noise_turn_on_bias_bias_walk_and_orientation_error_match_the_settings():
    tau, period = 0.05, 1e-3
    noise = {'angular_velocity': {'mean': 0.002, 'stddev': [0.01, 0.02, 0.03],
                                  'bias_mean': 0.05},
             'linear_acceleration': {'dynamic_bias_stddev': 0.2,
                                     'dynamic_bias_correlation_time': tau},
             'orientation': 0.01, 'seed': 7}
    sim, exact, readings = welded_imu(noise, 100000)
    assert np.allclose(exact[7:], rpy_to_matrix([0.2, 0, 0]).T @ [0, 0, G], atol=1e-12)
    gyro = readings[:, 4:7] - exact[4:7]
    # white noise about mean + a turn-on bias of 0.05 rad/s with a random sign
    assert np.allclose(gyro.std(axis=0), [0.01, 0.02, 0.03], rtol=0.05)
    assert np.allclose(np.abs(gyro.mean(axis=0) - 0.002), 0.05, rtol=0.05)
    # the accelerometer's bias walks as a Gauss-Markov process: its spread, and each
    # sample's innovation b[k+1] - phi b[k] with phi = exp(-T / tau)
    walk = readings[:, 7:] - exact[7:]
    phi = math.exp(-period / tau)
    innovation = walk[1:] - phi * walk[:-1]
    assert np.allclose(innovation.std(axis=0), 0.2 * math.sqrt(1 - phi * phi), rtol=0.05)
    assert np.allclose(walk.std(axis=0), 0.2, rtol=0.05)
    # orientation: a small turn about each sensor axis, 0.01 rad standard deviation
    conj = exact[:4] * [1, -1, -1, -1]
    error = np.array([quat_multiply(conj, q)[1:] * 2.0 for q in readings[:, :4]])
    assert np.allclose(error.std(axis=0), 0.01, rtol=0.05)
    # a reset draws the same biases and samples again (the seed)
    sim.reset()
    sim.step(2)
    assert np.array_equal(sim.sensors.imu('imu'), readings[1])


def test_imus_of_gazebo_tags_are_read_and_the_config_wins():
    tag = ('<gazebo reference="arm"><sensor name="{name}" type="imu">'
           '<update_rate>{rate}</update_rate><pose>0.1 0 0 0 0 1.5708</pose>'
           '<topic>robot/imu_data</topic><imu><angular_velocity><x><noise type="gaussian">'
           '<mean>0</mean><stddev>2e-4</stddev><bias_mean>7.5e-6</bias_mean></noise></x>'
           '</angular_velocity><linear_acceleration><z><noise type="gaussian">'
           '<stddev>1.7e-2</stddev><dynamic_bias_stddev>0.01</dynamic_bias_stddev>'
           '<dynamic_bias_correlation_time>300</dynamic_bias_correlation_time></noise></z>'
           '</linear_acceleration></imu></sensor></gazebo>')
    urdf = robot('turntable', link('base'), link('arm', inertial(1.0, 0.01, 0.02, 0.03)),
                 joint('spin', 'continuous', 'base', 'arm', axis='0 0 1'),
                 tag.format(name='tagged', rate=250) + tag.format(name='both', rate=50)
                 + tag.format(name='broken', rate='fast') + tag.format(name='negative', rate=-5))
    sim = Simulator.from_urdf(urdf, {'imu_sensors': {'both': {'link': 'base', 'rate': 10}}})
    imus = {imu.name: imu for imu in sim.model.imus}
    assert set(imus) == {'tagged', 'both'}
    tagged = imus['tagged']
    assert (tagged.link, tagged.rate, tagged.topic) == ('arm', 250.0, 'robot/imu_data')
    assert np.allclose(tagged.pos, [0.1, 0, 0])
    assert np.allclose(tagged.gyro[1], [2e-4, 0, 0]) and np.allclose(tagged.gyro[2],
                                                                     [7.5e-6, 0, 0])
    assert np.allclose(tagged.accel[1], [0, 0, 1.7e-2]) and tagged.accel[4][2] == 0.01
    assert tagged.accel_correlation_time == 300.0
    assert (imus['both'].link, imus['both'].rate, imus['both'].topic) == ('base', 10.0,
                                                                          'both/imu')
    broken = [w for w in sim.model.warnings if "'broken'" in w]
    assert len(broken) == 1 and 'line' in broken[0] and 'update_rate' in broken[0]
    # a value that reads but is out of range: the config's check names the key, and it is
    # skipped too
    negative = [w for w in sim.model.warnings if 'imu_sensors.negative.rate' in w]
    assert len(negative) == 1 and 'Hz' in negative[0] and 'skipped' in negative[0]


@pytest.mark.parametrize('imu,words', [
    ({'link': 'armm'}, ["link 'armm'", "'arm'"]),
    ({'link': 'arm', 'rate': -5}, ['imu_sensors.x.rate', 'Hz']),
    ({'link': 'arm', 'noise': {'linear_acceleration': {'stddev': -1}}},
     ['imu_sensors.x.noise.linear_acceleration.stddev', 'm/s^2']),
    ({'rate': 10}, ['imu_sensors.x', 'link']),
])
def test_a_bad_imu_setting_is_refused_with_the_key(imu, words):
    urdf = robot('turntable', link('base'), link('arm', inertial(1.0, 0.01, 0.02, 0.03)),
                 joint('spin', 'continuous', 'base', 'arm', axis='0 0 1'))
    with pytest.raises(ConfigError) as error:
        Simulator.from_urdf(urdf, {'imu_sensors': {'x': imu}})
    for word in words:
        assert word in str(error.value)


def test_reading_an_unknown_imu_names_the_ones_there_are():
    sim = resting_box({'link': 'box'})
    with pytest.raises(CommandError, match="unknown IMU 'imu2'.*imu"):
        sim.sensors.imu('imu2')
    with pytest.raises(CommandError, match='an IMU'):
        sim.sensors.wrench('imu')
