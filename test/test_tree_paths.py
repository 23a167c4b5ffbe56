"""
The tree's rows in the path form against their column form, on the same state.

The column form solves each row's response U = H'^-1 J^T over the whole tree; the path form
keeps y = L^-T J^T and D^-1 y on the rows' paths (physics/tree_rows.py).  Both must give the
same Delassus matrix J H'^-1 J^T (entries J_s U_r against y_s . D^-1 y_r), the same row
velocities J qd, and one solve the same velocities and impulses: a ground contact, a contact
between the robot and a free object (two trees), a contact between two links of one robot
(the two paths meet), a live joint's friction row and a mimic pair's row.
"""
from jointsim_ros import Simulator
from jointsim_ros.physics import contacts as ct
from jointsim_ros.physics import tree as T
from jointsim_ros.physics import tree_rows as R
from jointsim_ros.physics.math3d import entry
import numpy as np
import pytest
from robots import box_inertial, collision_box, inertial, joint, link, robot


@entry
def _rows(tm, ts, wk, axes, contacts, cwork, dt, paths):
    """Make this step's contact and axis rows from the state as the step does."""
    R.forget_body_responses(wk)
    R.body_velocities(tm, wk, ts.qd)
    if paths:
        R.contact_rows_paths(tm, ts, wk, contacts, cwork, ts.body_pos, dt)
    else:
        R.contact_rows(tm, wk, contacts, cwork, ts.body_pos, dt)
    R.axis_rows(tm, ts, wk, axes, dt, paths)


@entry
def _solve(tm, ts, wk, joints, links, axes, drives, contacts, cwork, param, dt, paths, info):
    """Make the rows and targets, then solve them once (one sweep from the impulses held)."""
    R.forget_body_responses(wk)
    if links.rows.shape[0] > 0:
        R.link_rows(tm, ts, wk, joints, links, paths)
    R.body_velocities(tm, wk, ts.qd)
    if paths:
        R.contact_rows_paths(tm, ts, wk, contacts, cwork, ts.body_pos, dt)
        ct.targets_from_speeds(contacts, cwork, param, dt)
    else:
        R.contact_rows(tm, wk, contacts, cwork, ts.body_pos, dt)
        ct.contact_targets(contacts, cwork, ts.qd, wk.qd_backup, param, dt)
    R.axis_rows(tm, ts, wk, axes, dt, paths)
    T._find_islands(tm, wk, joints, links, contacts, cwork)
    T._solve_rows(tm, ts, wk, links, axes, drives, contacts, cwork, dt, 1, 0.0, 0.0, True, paths,
                  info)


def dumbbell_and_ball():
    """Return a floating dumbbell on the ground, its hinge with friction, a ball against it."""
    def ball(x):
        return (inertial(1.0, 1e-3, 1e-3, 1e-3, xyz=f'{x} 0 0')
                + f'<collision><origin xyz="{x} 0 0"/><geometry><sphere radius="0.05"/>'
                '</geometry></collision>')
    urdf = robot('dumbbell', link('back', ball(0.0)), link('front', ball(0.15)),
                 joint('hinge', 'continuous', 'back', 'front', xyz='0.15 0 0', axis='0 0 1',
                       extra='<dynamics friction="0.2"/>'))
    sim = Simulator.from_urdf(urdf, {
        'base': 'floating', 'solver': {'formulation': 'tree'}, 'scene': {'ball': {
            'shape': 'sphere', 'radius': 0.05, 'mass': 2.0,
            'pose': {'position': [0.3995, 0.0, 0.05]}}}})
    sim.set_base_state([0.0, 0.0, 0.0499], [1, 0, 0, 0], [0.3, 0.0, 0.0], [0.0, 0.0, 0.2])
    return sim


def folding_arm():
    """Return a two-link arm on a post folded so its tip rests on its upper link (one tree)."""
    lim = '<limit lower="-4" upper="4" effort="100" velocity="100"/>'
    urdf = robot(
        'folding', link('post'),
        link('upper', box_inertial(1.0, (0.6, 0.1, 0.1), xyz='0.3 0 0')
             + collision_box((0.6, 0.1, 0.1), xyz='0.3 0 0')),
        link('lower', box_inertial(1.0, (0.6, 0.1, 0.1), xyz='0.3 0 0')
             + collision_box((0.6, 0.1, 0.1), xyz='0.3 0 0')),
        link('tip', box_inertial(0.5, (0.1, 0.1, 0.1)) + collision_box((0.1, 0.1, 0.1))),
        joint('shoulder', 'revolute', 'post', 'upper', axis='0 0 1', extra=lim),
        joint('elbow', 'revolute', 'upper', 'lower', xyz='0.6 0 0', axis='0 1 0',
              extra=lim + '<dynamics friction="0.5"/>'),
        joint('wrist', 'fixed', 'lower', 'tip', xyz='0.65 0 0'))
    sim = Simulator.from_urdf(urdf, {
        'solver': {'formulation': 'tree'}, 'collision': {'self_collision': True},
        'gravity': [0, 0, 0], 'initial_positions': {'elbow': -2.95}})
    sim.set_joint_state({'elbow': -2.95, 'shoulder': 0.0}, {'elbow': -1.0, 'shoulder': 0.5})
    sim.set_joint_efforts({'elbow': -5.0})   # pressing the tip onto the upper link
    return sim


def mimic_pair():
    """Return two pendulums, the second mimicking the first, their balls on a rigid ground."""
    lim = '<limit lower="-1" upper="1" effort="10" velocity="10"/>'
    ball = ('<collision><origin xyz="0.1 0 -0.3"/><geometry><sphere radius="0.05"/></geometry>'
            '</collision>')
    urdf = robot('mimic', link('base'),
                 link('a', inertial(1.0, 0.01, 0.01, 0.01, xyz='0 0 -0.2') + ball),
                 link('b', inertial(1.0, 0.01, 0.01, 0.01, xyz='0 0 -0.2') + ball),
                 joint('ja', 'revolute', 'base', 'a', extra=lim),
                 joint('jb', 'revolute', 'base', 'b', xyz='0.3 0 0',
                       extra=lim + '<mimic joint="ja" multiplier="0.5"/>'))
    sim = Simulator.from_urdf(urdf, {
        'solver': {'formulation': 'tree'}, 'ground': {'enabled': True, 'height': -0.345},
        'collision': {'contact_model': 'rigid'}})
    sim.set_joint_state({'ja': 0.0, 'jb': 0.0}, {'ja': 0.4, 'jb': 0.2})
    return sim


#: The scenes and the steps after which they touch.
SCENES = {'dumbbell and ball': (dumbbell_and_ball, 1), 'folding arm': (folding_arm, 300),
          'mimic pair': (mimic_pair, 2)}


def _touching(name):
    """Return the scene in tree mode one step in, with rows to compare."""
    make, steps = SCENES[name]
    sim = make()
    engine = sim._engine
    sim.step(steps)
    assert sum(1 for c in sim.contacts() if c.normal_force > 0.0) >= 1
    return sim, engine


def _dense(engine, paths):
    """Return the rows as dense (rows x n_v) Jacobian-side and response-side matrices."""
    tm, cw, wk = engine.tree, engine.cwork, engine.tree_work
    n_v = len(engine.tree_state.qd)
    left, right, constant = [], [], []
    group_of_start = {}
    for g in range(len(tm.group_v) - 1):
        start = int(tm.group_v[g]) + (g if paths else 0)
        group_of_start[start] = int(tm.group_v[g])
    for i in range(int(engine.contacts.count[0])):
        if cw.row_seg[i, 0] < 0:
            continue
        for k in range(3):
            a, b = np.zeros(n_v), np.zeros(n_v)
            for s in range(2):
                start = int(cw.row_seg[i, s])
                if start < 0:
                    continue
                g0 = group_of_start[start]
                n = int(cw.row_len[i, s]) - (1 if paths else 0)
                a[g0:g0 + n] += cw.row_J[i, k, s, :n]
                b[g0:g0 + n] += cw.row_U[i, k, s, :n]
            left.append(a)
            right.append(b)
            constant.append(cw.row_J[i, k, 0, int(cw.row_len[i, 0]) - 1] if paths else None)
    for t in range(int(wk.axis_live_n[0])):
        x = int(wk.axis_live[t])
        v = int(tm.axis_v[x])
        g = int(tm.node_group[tm.v_node[v]])
        g0, n = int(tm.group_v[g]), int(tm.group_v[g + 1] - tm.group_v[g])
        a, b = np.zeros(n_v), np.zeros(n_v)
        if paths:
            a[g0:g0 + n] = wk.axis_Y[x, :n]
        else:
            a[v] = 1.0
        b[g0:g0 + n] = wk.axis_U[x, :n]
        left.append(a)
        right.append(b)
        constant.append(wk.axis_Y[x, n] if paths else None)
    return np.array(left), np.array(right), constant


def _rows_args(engine, paths):
    return (engine.tree, engine.tree_state, engine.tree_work, engine.axes, engine.contacts,
            engine.cwork, engine.dt, paths)


@pytest.mark.parametrize('name', SCENES)
def test_the_path_form_gives_the_column_forms_delassus_matrix_and_row_velocities(name):
    sim, engine = _touching(name)
    _rows(*_rows_args(engine, False))
    J, U, _ = _dense(engine, False)
    _rows(*_rows_args(engine, True))
    Y, DY, c = _dense(engine, True)
    assert len(J) == len(Y) >= 4
    columns = J @ U.T          # J_s U_r
    path = Y @ DY.T            # y_s . D^-1 y_r
    scale = np.abs(columns).max()
    assert np.allclose(columns, columns.T, rtol=0, atol=1e-12 * scale)
    assert np.allclose(path, columns, rtol=0, atol=1e-11 * scale)
    # the path form's constant: each row's velocity J qd now
    qd = engine.tree_state.qd
    assert np.allclose(c, J @ qd, rtol=0, atol=1e-12 * max(1.0, np.abs(J @ qd).max()))
    kinv = engine.cwork.kinv
    if name == 'folding arm':  # a row between two links of the tree: its two paths meet
        bodies = engine.contacts.body[:int(engine.contacts.count[0])]
        assert ((bodies[:, 0] >= 0) & (bodies[:, 1] >= 0)).any()
    elif name == 'dumbbell and ball':  # a row between the robot and the ball: two trees
        assert (engine.cwork.row_seg[:int(engine.contacts.count[0]), 1] >= 0).any()
    assert np.isfinite(kinv).all()


@pytest.mark.parametrize('name', SCENES)
def test_one_sweep_of_the_path_form_moves_the_velocities_as_the_column_form(name):
    sim, engine = _touching(name)
    ts = engine.tree_state
    # from no impulses and every coordinate 0.3 slower (the rows must move the velocities)
    held = (ts.qd - 0.3, np.zeros_like(engine.contacts.impulse),
            np.zeros_like(ts.axis_impulse))
    engine.tree_work.qd_backup[:] = ts.qd
    results = []
    for paths in (False, True):
        ts.qd[:] = held[0]
        engine.contacts.impulse[:] = held[1]
        ts.axis_impulse[:] = held[2]
        ts.link_impulse[:] = 0.0
        _solve(engine.tree, ts, engine.tree_work, engine.joints, engine.links, engine.axes,
               engine.drives, engine.contacts, engine.cwork, engine.contact_param, engine.dt,
               paths, engine.info)
        results.append((ts.qd.copy(), engine.contacts.impulse.copy(), ts.axis_impulse.copy(),
                        ts.link_impulse.copy()))
    (qd_c, contact_c, axis_c, link_c), (qd_p, contact_p, axis_p, link_p) = results
    assert np.abs(qd_c - held[0]).max() > 1e-6    # the rows moved the velocities
    assert np.allclose(qd_p, qd_c, rtol=0, atol=1e-12 * max(1.0, np.abs(qd_c).max()))
    assert np.allclose(contact_p, contact_c, rtol=0, atol=1e-12 * np.abs(contact_c).max())
    assert np.allclose(axis_p, axis_c, rtol=0, atol=1e-12 * max(1e-9, np.abs(axis_c).max()))
    assert np.allclose(link_p, link_c, rtol=0,
                       atol=1e-12 * max([1e-9] + list(np.abs(link_c).ravel())))
    if name == 'mimic pair':
        assert np.abs(link_c).max() > 1e-6
