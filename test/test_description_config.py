"""The simulator config schema: defaults, sources, and errors that name the key."""
import ast
from dataclasses import dataclass, fields
from pathlib import Path

from description_helpers import joint, link, robot
from jointsim_ros.description import load_config, load_model, SimConfig
from jointsim_ros.description.config import (config_table, default_yaml, GroundSettings, SCHEMA,
                                             SolverSettings, TABLE_BEGIN, TABLE_END)
from jointsim_ros.description.drives import DriveParameters
from jointsim_ros.description.schema import Context, keys_of, number, setting, vector3
from jointsim_ros.errors import ConfigError
import pytest

REPO = Path(__file__).resolve().parents[1]
LIMIT = (-1.0, 1.0, 10.0, 2.0)


def config_error(source):
    """Return the message of the ConfigError that load_config raises."""
    with pytest.raises(ConfigError) as error:
        load_config(source)
    return str(error.value)


def two_joint_robot():
    return robot(link('base', 1.0), link('upper', 1.0), link('lower', 1.0), link('flange'),
                 joint('shoulder', 'revolute', 'base', 'upper', axis=(0, 1, 0), limit=LIMIT),
                 joint('elbow', 'revolute', 'upper', 'lower', axis=(0, 1, 0), limit=LIMIT),
                 joint('flange_joint', 'fixed', 'lower', 'flange'))


def test_defaults():
    config = load_config(None)
    assert config.dt == 0.001
    assert config.gravity == (0.0, 0.0, -9.81)
    assert config.base == 'fixed'
    assert config.base_pose.position == (0.0, 0.0, 0.0)
    assert config.initial_positions == {} and config.keep_fixed_joints == ()
    assert config.solver == SolverSettings()
    assert config.given_keys == frozenset()


def test_schema_covers_every_config_field():
    names = [key.name for key in SCHEMA]
    assert names == [f.name for f in fields(SimConfig)][:len(names)]
    assert {f.name for f in fields(SimConfig)} - set(names) == {'source', 'given_keys'}


def test_default_yaml_file_is_generated_from_the_schema_and_loads_to_defaults():
    path = REPO / 'config' / 'default.yaml'
    assert path.read_text() == default_yaml(), 'regenerate config/default.yaml'
    config = load_config(str(path))
    defaults = SimConfig()
    for key in SCHEMA:
        assert getattr(config, key.name) == getattr(defaults, key.name), key.name
    assert config.given_keys == frozenset(key.name for key in SCHEMA)
    for line in path.read_text().splitlines():
        if ':' in line and not line.lstrip().startswith('#') and not line.endswith(':'):
            assert '# [' in line, f'no unit comment: {line}'


def test_docs_config_table_is_generated_from_the_schema():
    text = (REPO / 'docs' / 'config.md').read_text()
    start, end = text.index(TABLE_BEGIN), text.index(TABLE_END) + len(TABLE_END) + 1
    assert text[start:end] == config_table(), 'regenerate the table in docs/config.md'
    for key in SCHEMA:
        assert f'| `{key.name}' in text, key.name


def test_every_key_has_a_unit_a_doc_and_a_check():
    from jointsim_ros.description.config import NAMED_SECTIONS
    from jointsim_ros.description.schema import keys_of
    tables = [SCHEMA] + [keys_of(cls) for cls in NAMED_SECTIONS.values()]
    tables += [keys_of(key.convert.section) for key in SCHEMA
               if getattr(key.convert, 'section', None)]
    for table in tables:
        for key in table:
            assert key.unit and key.doc and callable(key.convert), key.name
    assert set(NAMED_SECTIONS) == {
        'drives', 'joints', 'contacts', 'scene', 'loop_joints', 'linear_actuators',
        'distance_sensors', 'path_points', 'force_torque_sensors', 'imu_sensors',
        'range_sensors', 'joint_sensors', 'grasps'}


def test_values_are_converted_and_kept():
    config = load_config({
        'dt': 0.002, 'gravity': [0, 0, -1.62], 'base': 'floating',
        'base_pose': {'position': [1, 2, 3], 'rpy': [0, 0, 1.5]},
        'initial_positions': {'elbow': 0.5}, 'initial_velocities': {'elbow': -1},
        'keep_fixed_joints': ['flange_joint'],
        'solver': {'iterations': 50, 'tolerance': 1e-6, 'warm_start': False},
        'ground': {'height': -0.5, 'friction': 0.7}, 'drives': {'elbow': {'gear_ratio': 100}},
    })
    assert config.dt == 0.002 and config.gravity == (0.0, 0.0, -1.62)
    assert config.base_pose.rpy == (0.0, 0.0, 1.5)
    assert config.initial_velocities == {'elbow': -1.0}
    assert config.solver == SolverSettings(iterations=50, tolerance=1e-6, warm_start=False)
    assert config.ground == GroundSettings(height=-0.5, friction=0.7)
    assert config.drives == {'elbow': DriveParameters(gear_ratio=100.0)}
    assert 'solver' in config.given_keys and 'contacts' not in config.given_keys


def test_yaml_file_reads_exponents_ros_layout_and_dotted_keys(tmp_path):
    path = tmp_path / 'sim.yaml'
    path.write_text('jointsim:\n  ros__parameters:\n    dt: 5e-4\n'
                    '    solver.iterations: 7\n    solver:\n      tolerance: 1e-5\n')
    config = load_config(path)
    assert config.dt == 0.0005
    assert (config.solver.iterations, config.solver.tolerance) == (7, 1e-5)
    assert config.source == f"config file '{path}'"


def test_unknown_key_suggests_the_close_one():
    message = config_error({'solver': {'itertions': 30}})
    assert "unknown key 'itertions' in solver; did you mean 'iterations'?" in message
    message = config_error({'gravty': [0, 0, -9.81]})
    assert "unknown key 'gravty'; did you mean 'gravity'?" in message
    assert 'dt, gravity, base' in message  # the known keys are listed


@pytest.mark.parametrize('data, expected', [
    ({'dt': -0.001}, "key 'dt' must be a number > 0 (s), got -0.001 (float)"),
    ({'dt': '1ms'}, "key 'dt' must be a number > 0 (s), got '1ms' (str)"),
    ({'dt': True}, "key 'dt' must be a number > 0 (s), got True (bool)"),
    ({'gravity': [0, -9.81]}, "key 'gravity' must be a list of 3 numbers (m/s^2)"),
    ({'base': 'floting'}, "key 'base' must be one of 'fixed', 'floating' (did you mean "
                          "'floating'?), got 'floting'"),
    ({'solver': {'iterations': 2.5}}, "key 'solver.iterations' must be an integer >= 1"),
    ({'solver': {'warm_start': 'yes'}}, "key 'solver.warm_start' must be true or false"),
    ({'base_pose': {'rpy': [0, 0]}}, "key 'base_pose.rpy' must be a list of 3 numbers (rad)"),
    ({'initial_positions': {'elbow': 'up'}},
     "key 'initial_positions.elbow' must be a number (rad or m), got 'up' (str)"),
    ({'keep_fixed_joints': 'flange_joint'}, "key 'keep_fixed_joints' must be a list of joint"),
    ({'ground': [1, 2]}, "key 'ground' must be a mapping"),
])
def test_bad_values_name_key_value_and_expectation(data, expected):
    assert expected in config_error(data)


def test_yaml_syntax_error_names_file_and_line(tmp_path):
    path = tmp_path / 'broken.yaml'
    path.write_text('dt: 0.001\nsolver:\n  iterations: [1, 2\n')
    message = config_error(str(path))
    assert 'broken.yaml' in message and 'not valid YAML at line' in message


def test_duplicate_yaml_key_and_missing_file(tmp_path):
    path = tmp_path / 'twice.yaml'
    path.write_text('dt: 0.001\ndt: 0.002\n')
    assert "key 'dt' appears twice" in config_error(str(path))
    assert "config file '/nope.yaml' does not exist" in config_error('/nope.yaml')


def test_unknown_joint_in_initial_positions_lists_close_matches():
    with pytest.raises(ConfigError) as error:
        load_model(two_joint_robot(), {'initial_positions': {'elbw': 0.3}})
    message = str(error.value)
    assert "initial_positions names joint 'elbw'" in message
    assert "did you mean 'elbow'?" in message


def test_config_joint_checks_against_the_model():
    def message_of(config):
        with pytest.raises(ConfigError) as error:
            load_model(two_joint_robot(), config)
        return str(error.value)
    assert 'which is fixed' in message_of({'initial_velocities': {'flange_joint': 1.0}})
    assert 'outside its limits [-1, 1]' in message_of({'initial_positions': {'elbow': 2.0}})
    message = message_of({'keep_fixed_joints': ['elbow']})
    assert "'elbow', which is revolute, not fixed" in message
    message = message_of({'keep_fixed_joints': ['flange_jiont']})
    assert "did you mean 'flange_joint'?" in message
    model, config = load_model(two_joint_robot(), {'initial_positions': {'elbow': 0.9}})
    assert config.initial_positions == {'elbow': 0.9}


def test_a_check_made_without_a_unit_takes_its_keys_unit_once():
    @dataclass(frozen=True)
    class Motor:
        torque: float = setting(1.0, 'N m', 'a torque', number(0.0))
        where: tuple = setting((0.0, 0.0, 0.0), 'm', 'a point', vector3())

    torque, where = keys_of(Motor)
    with pytest.raises(ConfigError, match=r"key 'torque' must be a number >= 0 \(N m\), got -1"):
        torque.convert(-1.0, Context('motor.yaml', 'torque'))
    with pytest.raises(ConfigError, match=r'a list of 3 numbers \(m\)'):
        where.convert([1.0], Context('motor.yaml', 'where'))
    # outside a setting it has no unit to take, and says so instead of checking
    with pytest.raises(TypeError, match='setting'):
        number(0.0)(1.0, Context('motor.yaml', 'torque'))


def test_every_key_names_its_unit_in_the_schema_only_once():
    package = Path(__file__).resolve().parents[1] / 'jointsim_ros'
    repeated = []
    for part in ('description/config.py', 'description/drives.py', 'description/config.py'):
        for call in ast.walk(ast.parse((package / part).read_text())):
            if not (isinstance(call, ast.Call) and getattr(call.func, 'id', '') == 'setting'
                    and len(call.args) >= 4 and isinstance(call.args[1], ast.Constant)):
                continue
            unit = call.args[1].value
            for inner in ast.walk(call.args[3]):
                if not isinstance(inner, ast.Call):
                    continue
                named = [k.value for k in inner.keywords if k.arg == 'unit']
                given = inner.args[:1] if getattr(inner.func, 'id', '') in (
                    'vector3', 'joint_numbers', 'fraction', '_positive', '_non_negative') else []
                if any(isinstance(v, ast.Constant) and v.value == unit for v in named + given):
                    repeated.append(f'{part}:{call.lineno}')
    assert repeated == [], "checks repeating their setting's unit (leave it out: setting() " \
        'passes it)'
