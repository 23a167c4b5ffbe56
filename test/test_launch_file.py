"""
The launch file and the rviz2 config, checked by reading them (launch is not installable here).

launch/sim.launch.py is parsed with ``ast`` and never imported or run.  The rviz config's
topics are compared with the names the node gives its topics (test_node_markers.py checks them
against a running node).
"""
import ast
import copy
from pathlib import Path

from jointsim_ros.ros import messages as ros_messages
from jointsim_ros.ros.node import CONTACT_MARKERS_TOPIC, wrench_topic
from jointsim_ros.sim.loading import load_robot
import pytest
import yaml

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
LAUNCH_FILE = PACKAGE_ROOT / 'launch' / 'sim.launch.py'
RVIZ_FILE = PACKAGE_ROOT / 'rviz' / 'jointsim.rviz'


@pytest.fixture(scope='module')
def tree():
    """Return the launch file's syntax tree."""
    return ast.parse(LAUNCH_FILE.read_text(), filename=str(LAUNCH_FILE))


def calls(tree, name):
    """Return every call of a function or class named ``name`` in the tree."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, 'attr', None)
            if called == name:
                found.append(node)
    return found


def keyword(call, name):
    """Return a keyword argument's value node, or None."""
    return next((k.value for k in call.keywords if k.arg == name), None)


def constant(node):
    """Return the value of a constant node, or None."""
    return node.value if isinstance(node, ast.Constant) else None


def test_launch_file_declares_its_six_arguments_with_descriptions(tree):
    declared = {}
    for call in calls(tree, 'DeclareLaunchArgument'):
        declared[constant(call.args[0])] = call
    assert set(declared) == {'robot', 'config', 'rviz', 'view', 'use_sim_time', 'formulation'}
    for name, call in declared.items():
        assert constant(keyword(call, 'description')), f'{name} has no description'
        assert keyword(call, 'default_value') is not None, f'{name} has no default'
    config_default = ast.dump(keyword(declared['config'], 'default_value'))
    assert 'PathJoinSubstitution' in config_default and "'default.yaml'" in config_default
    assert constant(keyword(declared['rviz'], 'default_value')) == 'true'
    assert constant(keyword(declared['view'], 'default_value')) == 'false'


def test_launch_file_starts_the_node_with_xacro_output_and_rviz_behind_a_condition(tree):
    nodes = {constant(keyword(call, 'executable')): call for call in calls(tree, 'Node')}
    assert set(nodes) == {'jointsim_node', 'rviz2', 'jointsim_view'}
    nodes['jointsim_ros'] = sim = nodes['jointsim_node']
    view = nodes['jointsim_view']
    assert constant(keyword(view, 'package')) == 'jointsim_ros'
    assert ast.dump(keyword(view, 'condition')) == ast.dump(ast.parse(
        "IfCondition(LaunchConfiguration('view'))", mode='eval').body) or \
        keyword(view, 'condition').func.id == 'IfCondition'
    assert constant(keyword(sim, 'executable')) == 'jointsim_node'
    parameters = ast.dump(keyword(sim, 'parameters'))
    assert "'robot_description'" in parameters and "'config_file'" in parameters
    (value,) = [v for v in calls(tree, 'ParameterValue') if 'Command' in ast.dump(v.args[0])]
    command = value.args[0]
    assert isinstance(command, ast.Call) and command.func.id == 'Command'
    assert constant(command.args[0].elts[0]) == 'xacro '
    assert isinstance(keyword(value, 'value_type'), ast.Name)
    assert keyword(value, 'value_type').id == 'str'
    rviz = nodes['rviz2']
    condition = keyword(rviz, 'condition')
    assert isinstance(condition, ast.Call) and condition.func.id == 'IfCondition'
    assert "'jointsim.rviz'" in ast.dump(keyword(rviz, 'arguments'))
    assert calls(tree, 'FindPackageShare')


def test_launch_file_is_a_flat_launch_description_that_never_runs_launch_here(tree):
    (function,) = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert function.name == 'generate_launch_description'
    (description,) = calls(tree, 'LaunchDescription')
    assert isinstance(description.args[0], ast.List)
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert modules <= {'launch', 'launch.actions', 'launch.conditions', 'launch.substitutions',
                       'launch_ros.actions', 'launch_ros.parameter_descriptions',
                       'launch_ros.substitutions'}


def test_rviz_config_shows_the_robot_model_from_the_topic_tf_and_a_grid():
    config = yaml.safe_load(RVIZ_FILE.read_text())
    manager = config['Visualization Manager']
    assert manager['Global Options']['Fixed Frame'] == 'world'
    displays = {d['Class']: d for d in manager['Displays']}
    assert {'rviz_default_plugins/RobotModel', 'rviz_default_plugins/TF',
            'rviz_default_plugins/Grid'} <= set(displays)
    model = displays['rviz_default_plugins/RobotModel']
    assert model['Description Source'] == 'Topic'
    assert model['Description Topic']['Value'] == 'robot_description'
    assert model['Description Topic']['Durability Policy'] == 'Transient Local'
    shown = ('rviz_default_plugins/RobotModel', 'rviz_default_plugins/TF',
             'rviz_default_plugins/Grid')
    assert all(displays[c]['Enabled'] for c in shown)


def rviz_displays():
    """Return the displays of the rviz config, parsed as YAML."""
    return yaml.safe_load(RVIZ_FILE.read_text())['Visualization Manager']['Displays']


def test_rviz_config_shows_the_contact_markers_topic_and_both_namespaces():
    (markers,) = [d for d in rviz_displays() if d['Class'] == 'rviz_default_plugins/MarkerArray']
    assert markers['Enabled'] and markers['Value']
    assert markers['Topic']['Value'] == CONTACT_MARKERS_TOPIC
    assert markers['Topic']['Reliability Policy'] == 'Reliable'   # as the node publishes
    assert markers['Namespaces'] == {ros_messages.CONTACT_POINTS_NS: True,
                                     ros_messages.CONTACT_FORCES_NS: True}


def test_rviz_config_names_only_topics_the_node_publishes_for_the_bundled_arm():
    # the node with no robot parameter: the bundled arm with config/jointsim_arm.yaml
    sensors = load_robot().sim.sensors.names
    published = {'robot_description', CONTACT_MARKERS_TOPIC}
    published |= {wrench_topic(name) for name in sensors}
    for display in rviz_displays():
        topic = display.get('Topic') or display.get('Description Topic')
        if topic is None:
            continue
        # relative, as the node's own names: both follow a namespace given to the launch
        assert not topic['Value'].startswith('/')
        if display['Class'] == 'rviz_default_plugins/Wrench':
            # a Wrench display per sensor of the bundled arm, enabled
            sensor = topic['Value'][:-len('/wrench')]
            assert topic['Value'] == wrench_topic(sensor)
            assert display['Enabled'] == (sensor in sensors), display['Name']
            assert display['Force Arrow Scale'] > 0.0 and display['Torque Arrow Scale'] > 0.0
        if display['Enabled']:
            assert topic['Value'] in published, display['Name']
    wrench_names = {d['Topic']['Value'] for d in rviz_displays()
                    if d['Class'] == 'rviz_default_plugins/Wrench'}
    assert {wrench_topic(name) for name in sensors} <= wrench_names
    assert 'wrist_ft' in sensors


def test_ros2_control_launch_puts_the_controller_manager_in_front_of_the_node():
    path = PACKAGE_ROOT / 'launch' / 'ros2_control.launch.py'
    tree = ast.parse(path.read_text(), filename=str(path))
    declared = {constant(call.args[0]): call for call in calls(tree, 'DeclareLaunchArgument')}
    assert set(declared) == {'command_interface', 'controller', 'rviz', 'use_sim_time',
                             'formulation'}
    assert all(keyword(call, 'description') is not None for call in declared.values())
    nodes = [(constant(keyword(c, 'package')), constant(keyword(c, 'executable')), c)
             for c in calls(tree, 'Node')]
    assert [n[:2] for n in nodes] == [
        ('jointsim_ros', 'jointsim_node'), ('controller_manager', 'ros2_control_node'),
        ('robot_state_publisher', 'robot_state_publisher'), ('controller_manager', 'spawner'),
        ('controller_manager', 'spawner'), ('rviz2', 'rviz2')]
    sim = nodes[0][2]
    assert constant(keyword(sim, 'namespace')) == 'sim'  # /joint_states is the broadcaster's
    parameters = keyword(sim, 'parameters').elts[0]
    given = {constant(k): v for k, v in zip(parameters.keys, parameters.values)}
    assert constant(given['publish_tf']) is False
    assert constant(given['publish_robot_description']) is False
    text = path.read_text()
    for name in ('jointsim_arm_ros2_control.urdf.xacro', 'jointsim_arm_controllers.yaml',
                 'jointsim_arm.yaml'):
        assert f"'{name}'" in text and (PACKAGE_ROOT / 'config' / name).exists()
    controllers = yaml.safe_load((PACKAGE_ROOT / 'config' / 'jointsim_arm_controllers.yaml')
                                 .read_text())['controller_manager']['ros__parameters']
    spawned = constant(keyword(nodes[3][2], 'arguments').elts[0])
    assert spawned in controllers
    default = constant(keyword(declared['controller'], 'default_value'))
    assert default in controllers


HUMANOID_LAUNCH = PACKAGE_ROOT / 'launch' / 'humanoid.launch.py'


def expanded(tree):
    """
    Return the launch function's calls with every local name replaced by what it was given.

    ``robot = PathJoinSubstitution([...])`` then ``Node(arguments=['--robot', robot])``: the
    expanded Node holds the PathJoinSubstitution call, so its dump names the file.
    """
    (function,) = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    names = {}

    class Substitute(ast.NodeTransformer):

        def visit_Name(self, node):
            return copy.deepcopy(names[node.id]) if node.id in names else node

    for statement in function.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            names[statement.targets[0].id] = Substitute().visit(statement.value)
    (returned,) = [s for s in function.body if isinstance(s, ast.Return)]
    return Substitute().visit(copy.deepcopy(returned.value))


def test_humanoid_launch_starts_node_controller_and_rviz_on_files_the_package_installs():
    tree = ast.parse(HUMANOID_LAUNCH.read_text(), filename=str(HUMANOID_LAUNCH))
    nodes = {constant(keyword(call, 'executable')): call for call in calls(tree, 'Node')}
    assert set(nodes) == {'jointsim_node', 'jointsim_humanoid_controller', 'rviz2'}
    setup = (PACKAGE_ROOT / 'setup.py').read_text()
    for executable in ('jointsim_node', 'jointsim_humanoid_controller'):
        assert f"'{executable} = jointsim_ros." in setup, executable
    text = ast.dump(tree)
    for folder, name in (('urdf', 'jointsim_humanoid.urdf.xacro'),
                         ('config', 'jointsim_humanoid.yaml'),
                         ('urdf', 'jointsim_humanoid_valve.urdf.xacro'),
                         ('config', 'jointsim_humanoid_valve.yaml'),
                         ('rviz', 'jointsim_humanoid.rviz')):
        assert f"'{name}'" in text and (PACKAGE_ROOT / folder / name).is_file()
    for call in calls(tree, 'Node'):
        if constant(keyword(call, 'executable')) == 'jointsim_node':
            node_parameters = ast.dump(keyword(call, 'parameters'))
            assert "'publish_rate'" in node_parameters and "'robot_description'" in node_parameters
    assert keyword(nodes['rviz2'], 'condition').func.id == 'IfCondition'
    declared = {constant(call.args[0]) for call in calls(tree, 'DeclareLaunchArgument')}
    assert declared == {'steps', 'valve', 'rviz', 'use_sim_time', 'formulation'}


def test_humanoid_launch_valve_true_runs_the_valve_scenario_and_false_the_walk():
    tree = ast.parse(HUMANOID_LAUNCH.read_text(), filename=str(HUMANOID_LAUNCH))
    (valve,) = [c for c in calls(tree, 'DeclareLaunchArgument') if constant(c.args[0]) == 'valve']
    assert constant(keyword(valve, 'default_value')) == 'false'
    assert constant(keyword(valve, 'description'))
    # per condition on the valve argument: the node's files and the controller's options
    started = {}
    for call in calls(expanded(tree), 'Node'):
        condition = keyword(call, 'condition')
        executable = constant(keyword(call, 'executable'))
        if executable == 'rviz2':
            assert "'valve'" not in ast.dump(condition)         # rviz2 in both
            continue
        assert condition.func.id in ('IfCondition', 'UnlessCondition'), executable
        (argument,) = condition.args
        assert argument.func.id == 'LaunchConfiguration' and constant(argument.args[0]) == 'valve'
        started[(executable, condition.func.id == 'IfCondition')] = call
    assert set(started) == {('jointsim_node', False), ('jointsim_node', True),
                            ('jointsim_humanoid_controller', False),
                            ('jointsim_humanoid_controller', True)}
    for valve_on, robot, config in (
            (False, 'jointsim_humanoid.urdf.xacro', 'jointsim_humanoid.yaml'),
            (True, 'jointsim_humanoid_valve.urdf.xacro', 'jointsim_humanoid_valve.yaml')):
        parameters = keyword(started['jointsim_node', valve_on], 'parameters').elts[0]
        given = {constant(k): v for k, v in zip(parameters.keys, parameters.values)}
        description = ast.dump(given['robot_description'])
        assert "'xacro '" in description and f"'{robot}'" in description
        assert f"'{config}'" in ast.dump(given['config_file'])
        assert constant(given['publish_rate']) == 200.0
        # a late tick: at most 7 steps for the walk (1.4 ticks), one tick's for the valve
        assert constant(given['catch_up_ticks']) == (1.0 if valve_on else 1.4)
    # the controller reads the humanoid's own files in both; --valve only with valve:=true
    for valve_on in (False, True):
        arguments = keyword(started['jointsim_humanoid_controller', valve_on], 'arguments').elts
        options = [constant(a) for a in arguments]
        assert ast.dump(arguments[options.index('--robot') + 1]).count(
            "'jointsim_humanoid.urdf.xacro'") == 1
        assert ast.dump(arguments[options.index('--config') + 1]).count(
            "'jointsim_humanoid.yaml'") == 1
        assert ('--valve' in options) == valve_on
        assert ('--steps' in options) != valve_on
    # the options the launch file gives are the controller's
    from jointsim_ros.tools.humanoid_controller import parse_args
    assert parse_args(['--robot', 'r', '--config', 'c', '--valve']).valve
    assert not parse_args(['--robot', 'r', '--config', 'c', '--steps', '3']).valve


def test_rover_launch_starts_node_controller_rviz_and_view_on_files_the_package_installs():
    path = PACKAGE_ROOT / 'launch' / 'rover.launch.py'
    tree = ast.parse(path.read_text(), filename=str(path))
    nodes = {constant(keyword(call, 'executable')): call for call in calls(expanded(tree), 'Node')}
    assert set(nodes) == {'jointsim_node', 'jointsim_rover_controller', 'rviz2', 'jointsim_view'}
    setup = (PACKAGE_ROOT / 'setup.py').read_text()
    for executable in ('jointsim_node', 'jointsim_rover_controller', 'jointsim_view'):
        assert f"'{executable} = jointsim_ros." in setup, executable
    for folder, name in (('urdf', 'jointsim_rover.urdf.xacro'), ('config', 'jointsim_rover.yaml'),
                         ('rviz', 'jointsim_rover.rviz')):
        assert f"'{name}'" in ast.dump(tree) and (PACKAGE_ROOT / folder / name).is_file()
    parameters = keyword(nodes['jointsim_node'], 'parameters').elts[0]
    given = {constant(k): v for k, v in zip(parameters.keys, parameters.values)}
    description = ast.dump(given['robot_description'])
    assert "'xacro '" in description and "'jointsim_rover.urdf.xacro'" in description
    assert "'jointsim_rover.yaml'" in ast.dump(given['config_file'])
    for optional, argument in (('rviz2', 'rviz'), ('jointsim_view', 'view')):
        condition = keyword(nodes[optional], 'condition')
        assert condition.func.id == 'IfCondition'
        assert constant(condition.args[0].args[0]) == argument
    assert keyword(nodes['jointsim_rover_controller'], 'condition') is None
    declared = {constant(c.args[0]): c for c in calls(tree, 'DeclareLaunchArgument')}
    assert set(declared) == {'rviz', 'view', 'use_sim_time', 'formulation'}
    for name, call in declared.items():
        assert constant(keyword(call, 'description')), f'{name} has no description'


def test_rover_rviz_config_shows_the_scan_best_effort_and_follows_the_rover():
    from jointsim_ros.ros.robot_topics import range_topics
    from jointsim_ros.sim.simulator import Simulator
    sim = Simulator.from_urdf(str(PACKAGE_ROOT / 'urdf' / 'jointsim_rover.urdf.xacro'),
                              str(PACKAGE_ROOT / 'config' / 'jointsim_rover.yaml'))
    config = yaml.safe_load((PACKAGE_ROOT / 'rviz' / 'jointsim_rover.rviz').read_text())
    manager = config['Visualization Manager']
    displays = {d['Name']: d for d in manager['Displays'] if d.get('Enabled')}
    assert displays['Scan']['Class'] == 'rviz_default_plugins/LaserScan'
    scan = displays['Scan']['Topic']
    (topic, kind), = range_topics(sim.sensors.range_sensor('lidar'))
    assert (scan['Value'], kind.__name__) == (topic, 'LaserScan')
    # the node publishes it best effort: a reliable display would receive nothing
    assert scan['Reliability Policy'] == 'Best Effort'
    scene = displays['Scene']['Topic']
    assert (scene['Value'], scene['Durability Policy']) == ('scene_markers', 'Transient Local')
    assert manager['Views']['Current']['Target Frame'] in sim.model.links
    assert manager['Global Options']['Fixed Frame'] == 'world'


@pytest.mark.parametrize('name', ['sim', 'humanoid', 'ros2_control', 'world', 'rover'])
def test_launch_formulation_argument_reaches_every_node_as_a_string(name):
    # launch_ros reads a bare substitution as YAML: an empty one would be None and refused, so
    # the argument goes through ParameterValue(..., value_type=str) to the node's parameter
    path = PACKAGE_ROOT / 'launch' / f'{name}.launch.py'
    tree = expanded(ast.parse(path.read_text(), filename=str(path)))
    (declared,) = [c for c in calls(tree, 'DeclareLaunchArgument')
                   if constant(c.args[0]) == 'formulation']
    assert constant(keyword(declared, 'default_value')) == ''
    from jointsim_ros.ros.node import PARAMETERS
    assert next(p for p in PARAMETERS if p.name == 'formulation').default == ''
    nodes = [c for c in calls(tree, 'Node')
             if constant(keyword(c, 'executable')) == 'jointsim_node']
    assert nodes
    for node in nodes:
        parameters = keyword(node, 'parameters').elts[0]
        given = {constant(k): v for k, v in zip(parameters.keys, parameters.values)}
        value = given['formulation']
        assert isinstance(value, ast.Call) and value.func.id == 'ParameterValue'
        assert "Name(id='LaunchConfiguration', ctx=Load()), args=[Constant(value='formulation')]" \
            in ast.dump(value)
        assert keyword(value, 'value_type').id == 'str'


def test_humanoid_rviz_config_shows_its_four_sensors_and_follows_the_pelvis():
    from jointsim_ros.sim.simulator import Simulator
    sim = Simulator.from_urdf(str(PACKAGE_ROOT / 'urdf' / 'jointsim_humanoid.urdf.xacro'),
                              str(PACKAGE_ROOT / 'config' / 'jointsim_humanoid.yaml'))
    config = yaml.safe_load((PACKAGE_ROOT / 'rviz' / 'jointsim_humanoid.rviz').read_text())
    manager = config['Visualization Manager']
    wrenches = {d['Topic']['Value'] for d in manager['Displays']
                if d['Class'] == 'rviz_default_plugins/Wrench' and d['Enabled']}
    assert wrenches == {wrench_topic(name) for name in sim.sensors.names}
    assert manager['Views']['Current']['Target Frame'] in sim.model.links
    assert manager['Global Options']['Fixed Frame'] == 'world'


def test_world_launch_runs_the_node_on_a_world_file_with_the_view_and_a_controller_per_robot():
    # launch/world.launch.py: world_file:= reaches the node's world_file parameter (default the
    # bundled two-arm world, a file the package installs); the example controllers run in the
    # namespaces of that world's robots
    from jointsim_ros.description.world import load_world
    from jointsim_ros.ros.node import PARAMETERS
    path = PACKAGE_ROOT / 'launch' / 'world.launch.py'
    tree = expanded(ast.parse(path.read_text(), filename=str(path)))
    declared = {constant(c.args[0]): c for c in calls(tree, 'DeclareLaunchArgument')}
    assert set(declared) == {'world_file', 'formulation', 'view', 'controllers', 'use_sim_time'}
    for name, call in declared.items():
        assert constant(keyword(call, 'description')), f'{name} has no description'
    default = ast.dump(keyword(declared['world_file'], 'default_value'))
    assert "'config'" in default and "'two_arms.world.yaml'" in default
    assert (PACKAGE_ROOT / 'config' / 'two_arms.world.yaml').is_file()
    nodes = calls(tree, 'Node')
    (sim,) = [n for n in nodes if constant(keyword(n, 'executable')) == 'jointsim_node']
    parameters = keyword(sim, 'parameters').elts[0]
    given = {constant(k): v for k, v in zip(parameters.keys, parameters.values)}
    assert set(given) <= {p.name for p in PARAMETERS} | {'use_sim_time'}
    assert "args=[Constant(value='world_file')]" in ast.dump(given['world_file'])
    assert 'robot_description' not in given and 'config_file' not in given
    (view,) = [n for n in nodes if constant(keyword(n, 'executable')) == 'jointsim_view']
    assert keyword(view, 'condition').func.id == 'IfCondition'
    controllers = [n for n in nodes
                   if constant(keyword(n, 'executable')) == 'jointsim_example_controller']
    robots = [r.name for r in load_world(PACKAGE_ROOT / 'config' / 'two_arms.world.yaml').robots]
    assert sorted(constant(keyword(n, 'namespace')) for n in controllers) == sorted(robots)
    for node in controllers:
        assert "args=[Constant(value='controllers')]" in ast.dump(keyword(node, 'condition'))
    setup = (PACKAGE_ROOT / 'setup.py').read_text()
    for executable in ('jointsim_node', 'jointsim_view', 'jointsim_example_controller'):
        assert f"'{executable} = jointsim_ros." in setup, executable
    assert "files_in('launch/*.launch.py')" in setup and "files_in('config/*.yaml')" in setup
