"""
The launch file and the rviz2 config, checked by reading them (launch is not installable here).

launch/sim.launch.py is parsed with ``ast`` and never imported or run.
"""
import ast
from pathlib import Path

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


def test_launch_file_declares_its_four_arguments_with_descriptions(tree):
    declared = {}
    for call in calls(tree, 'DeclareLaunchArgument'):
        declared[constant(call.args[0])] = call
    assert set(declared) == {'robot', 'config', 'rviz', 'use_sim_time'}
    for name, call in declared.items():
        assert constant(keyword(call, 'description')), f'{name} has no description'
        assert keyword(call, 'default_value') is not None, f'{name} has no default'
    config_default = ast.dump(keyword(declared['config'], 'default_value'))
    assert 'PathJoinSubstitution' in config_default and "'default.yaml'" in config_default
    assert constant(keyword(declared['rviz'], 'default_value')) == 'true'


def test_launch_file_starts_the_node_with_xacro_output_and_rviz_behind_a_condition(tree):
    nodes = {constant(keyword(call, 'package')): call for call in calls(tree, 'Node')}
    assert set(nodes) == {'jointsim_ros', 'rviz2'}
    sim = nodes['jointsim_ros']
    assert constant(keyword(sim, 'executable')) == 'jointsim_node'
    parameters = ast.dump(keyword(sim, 'parameters'))
    assert "'robot_description'" in parameters and "'config_file'" in parameters
    (value,) = calls(tree, 'ParameterValue')
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
    assert all(d['Enabled'] for d in displays.values())
