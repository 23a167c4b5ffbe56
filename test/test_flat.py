"""Packed containers (physics/flat.py): one buffer per dtype, views that alias it."""
from collections import namedtuple

from jointsim_ros.physics import flat
from jointsim_ros.physics.compiler import entry
from jointsim_ros.simulator import Simulator
import numpy as np
import pytest

Box = namedtuple('Box', ['line', 'grid', 'cube', 'index', 'empty'])


def _box():
    return Box(line=np.arange(3.0), grid=np.arange(6.0).reshape(2, 3),
               cube=np.arange(8.0).reshape(2, 2, 2), index=np.arange(4, dtype=np.int64),
               empty=np.zeros((0, 3)))


@entry
def _touch(floats, ints, layout):
    box = Box(flat.view1(floats, layout, 0), flat.view2(floats, layout, 1),
              flat.view3(floats, layout, 2), flat.view1(ints, layout, 3),
              flat.view2(floats, layout, 4))
    box.grid[1, 2] += 100.0
    box.cube[1, 0, 1] += 1000.0
    box.index[3] += 10
    return box.line[2] + box.grid[0, 1] + box.cube[0, 1, 1] + box.index[1] + box.empty.shape[0]


def test_pack_keeps_values_and_the_views_alias_the_buffers():
    original = _box()
    box, floats, ints, layout = flat.pack(original)
    for name in Box._fields:
        np.testing.assert_array_equal(getattr(box, name), getattr(original, name))
        assert getattr(box, name).shape == getattr(original, name).shape
    assert floats.size == 3 + 6 + 8 and ints.size == 4
    box.grid[0, 0] = -5.0
    assert floats[layout[1, 0]] == -5.0


def test_kernel_views_read_and_write_the_same_elements_as_python():
    box, floats, ints, layout = flat.pack(_box())
    # line[2] + grid[0, 1] + cube[0, 1, 1] + index[1] + 0 rows
    assert _touch(floats, ints, layout) == 2.0 + 1.0 + 3.0 + 1.0
    assert box.grid[1, 2] == 105.0 and box.cube[1, 0, 1] == 1005.0 and box.index[3] == 13


def test_pack_refuses_other_dtypes_by_field_name():
    with pytest.raises(TypeError, match='Box.index'):
        flat.pack(_box()._replace(index=np.zeros(2, dtype=np.int32)))


def test_tree_engine_state_arrays_are_views_of_the_packed_buffers():
    urdf = """<robot name="r"><link name="a"><inertial><mass value="1"/><inertia ixx="0.1"
      iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <link name="b"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/><inertia ixx="0.01"
      iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="j" type="continuous"><parent link="a"/><child link="b"/>
      <axis xyz="0 1 0"/></joint></robot>"""
    sim = Simulator.from_urdf(urdf, {'solver': {'formulation': 'tree'}})
    engine = sim._engine
    # the facade's State and the tree's own arrays are the buffers the kernel is given
    for array in (*engine.state, *engine.tree_state, *engine.tree_work, *engine.tree):
        assert array.base is not None
    sim.set_joint_state({'j': 0.3})
    sim.step(10)
    # the pendulum swings back under gravity: what the kernel wrote, Python reads
    assert sim.joint_positions()[0] < 0.3
    assert engine.tree_state.node_q[0] == pytest.approx(sim.joint_positions()[0])
