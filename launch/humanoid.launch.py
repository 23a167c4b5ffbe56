"""
Launch the bundled humanoid: jointsim_node, its controller and rviz2; walking, or at the valve.

    ros2 launch jointsim_ros humanoid.launch.py
    ros2 launch jointsim_ros humanoid.launch.py steps:=20 rviz:=false
    ros2 launch jointsim_ros humanoid.launch.py valve:=true
    ros2 launch jointsim_ros humanoid.launch.py formulation:=tree   # docs/tree.md

The node runs urdf/jointsim_humanoid.urdf.xacro (through xacro) with
config/jointsim_humanoid.yaml and publishes joint states at 200 Hz, the rate the controller
runs at; jointsim_humanoid_controller reads the same two files, stands the robot up, shifts its
weight and walks ``steps`` steps by commanding the motor voltages (docs/humanoid.md).  With
``valve:=true`` the node runs the valve scenario instead (urdf/jointsim_humanoid_valve.urdf.xacro
with config/jointsim_humanoid_valve.yaml: the humanoid in front of a hand wheel, its grasp/NAME
services) and the controller, still on the humanoid's own two files, runs with ``--valve``: it
reaches the rim, grasps it, turns the valve half a turn and lets go (docs/valve.md).  rviz2
follows the pelvis and shows the contact forces and the ankle and wrist sensors' wrenches.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition, UnlessCondition
from launch.substitutions import Command, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    """Return the launch description: arguments, the node, the controller, rviz2 (optional)."""
    share = FindPackageShare('jointsim_ros')
    robot = PathJoinSubstitution([share, 'urdf', 'jointsim_humanoid.urdf.xacro'])
    config = PathJoinSubstitution([share, 'config', 'jointsim_humanoid.yaml'])
    valve_robot = PathJoinSubstitution([share, 'urdf', 'jointsim_humanoid_valve.urdf.xacro'])
    valve_config = PathJoinSubstitution([share, 'config', 'jointsim_humanoid_valve.yaml'])
    steps = LaunchConfiguration('steps')
    valve = LaunchConfiguration('valve')
    rviz = LaunchConfiguration('rviz')
    use_sim_time = LaunchConfiguration('use_sim_time')
    # a string even when empty (launch_ros reads a bare substitution as YAML)
    formulation = ParameterValue(LaunchConfiguration('formulation'), value_type=str)
    robot_description = ParameterValue(Command(['xacro ', robot]), value_type=str)
    valve_description = ParameterValue(Command(['xacro ', valve_robot]), value_type=str)

    return LaunchDescription([
        DeclareLaunchArgument(
            'steps', default_value='10',
            description='Number of steps to walk (0 stands); then it stands.'),
        DeclareLaunchArgument(
            'valve', default_value='false',
            description='true: the valve scenario (the humanoid turns a hand wheel) instead of '
                        'the walk; steps is then ignored.'),
        DeclareLaunchArgument(
            'formulation', default_value='',
            description="Replaces the config's solver.formulation: maximal or tree (exact "
                        "joints in generalized coordinates, docs/tree.md); empty: the config's."),
        DeclareLaunchArgument(
            'rviz', default_value='true',
            description='Start rviz2 with rviz/jointsim_humanoid.rviz (RobotModel, TF, '
                        'contacts, ankle and wrist wrenches, following the pelvis).'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='true',
            description='The nodes follow the simulated time on /clock.'),

        # the walk (valve:=false) ...
        Node(
            package='jointsim_ros',
            executable='jointsim_node',
            name='jointsim_node',
            output='screen',
            parameters=[{
                'robot_description': robot_description,
                'config_file': config,
                'publish_rate': 200.0,
                'catch_up_ticks': 1.4,
                'publish_clock': True,
                'formulation': formulation,
                'use_sim_time': use_sim_time,
            }],
            condition=UnlessCondition(valve),
        ),
        Node(
            package='jointsim_ros',
            executable='jointsim_humanoid_controller',
            name='jointsim_humanoid_controller',
            output='screen',
            arguments=['--robot', robot, '--config', config, '--steps', steps],
            parameters=[{'use_sim_time': use_sim_time}],
            condition=UnlessCondition(valve),
        ),
        # ... or the valve scenario (valve:=true): the node on the scenario's files, the
        # controller on the humanoid's own (it knows its body; the valve's place is its setting)
        Node(
            package='jointsim_ros',
            executable='jointsim_node',
            name='jointsim_node',
            output='screen',
            parameters=[{
                'robot_description': valve_description,
                'config_file': valve_config,
                'publish_rate': 200.0,
                'catch_up_ticks': 1.0,
                'publish_clock': True,
                'formulation': formulation,
                'use_sim_time': use_sim_time,
            }],
            condition=IfCondition(valve),
        ),
        Node(
            package='jointsim_ros',
            executable='jointsim_humanoid_controller',
            name='jointsim_humanoid_controller',
            output='screen',
            arguments=['--robot', robot, '--config', config, '--valve'],
            parameters=[{'use_sim_time': use_sim_time}],
            condition=IfCondition(valve),
        ),
        Node(
            package='rviz2',
            executable='rviz2',
            name='rviz2',
            arguments=['-d', PathJoinSubstitution([share, 'rviz', 'jointsim_humanoid.rviz'])],
            parameters=[{'use_sim_time': use_sim_time}],
            condition=IfCondition(rviz),
            output='log',
        ),
    ])
