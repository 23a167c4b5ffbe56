"""
Launch jointsim_node on a robot, with rviz2 showing it.

    ros2 launch jointsim_ros sim.launch.py
    ros2 launch jointsim_ros sim.launch.py robot:=/path/to/robot.urdf.xacro \
        config:=/path/to/sim.yaml rviz:=false
    ros2 launch jointsim_ros sim.launch.py view:=true     # the browser view (docs/view.md)
    ros2 launch jointsim_ros sim.launch.py formulation:=tree   # exact joints (docs/tree.md)

The robot description goes through xacro (plain URDF files pass unchanged) into the node's
robot_description parameter; the node republishes it on the robot_description topic, so rviz2's
RobotModel display and /tf work without robot_state_publisher.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import Command, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    """Return the launch description: arguments, the simulator node, rviz2 (optional)."""
    share = FindPackageShare('jointsim_ros')
    robot = LaunchConfiguration('robot')
    config = LaunchConfiguration('config')
    rviz = LaunchConfiguration('rviz')
    view = LaunchConfiguration('view')
    use_sim_time = LaunchConfiguration('use_sim_time')
    # a string even when empty (launch_ros reads a bare substitution as YAML)
    formulation = ParameterValue(LaunchConfiguration('formulation'), value_type=str)
    robot_description = ParameterValue(Command(['xacro ', robot]), value_type=str)

    return LaunchDescription([
        DeclareLaunchArgument(
            'robot',
            default_value=PathJoinSubstitution([share, 'urdf', 'jointsim_arm.urdf.xacro']),
            description='Robot description file (.urdf or .xacro), processed by xacro.'),
        DeclareLaunchArgument(
            'config',
            default_value=PathJoinSubstitution([share, 'config', 'default.yaml']),
            description='Simulator YAML config (docs/config.md): base, initial state, solver, '
                        'drives; its dt is replaced by 1 / physics_rate.'),
        DeclareLaunchArgument(
            'formulation', default_value='',
            description="Replaces the config's solver.formulation: maximal or tree (exact "
                        "joints in generalized coordinates, docs/tree.md); empty: the config's."),
        DeclareLaunchArgument(
            'rviz', default_value='true',
            description='Start rviz2 with rviz/jointsim.rviz (RobotModel, TF, grid).'),
        DeclareLaunchArgument(
            'view', default_value='false',
            description='Start jointsim_view, the browser view (viser): it prints its URL.'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='true',
            description='The nodes follow the simulated time on /clock (the simulator steps '
                        'on the wall clock in any case, and publishes /clock).'),

        Node(
            package='jointsim_ros',
            executable='jointsim_node',
            name='jointsim_node',
            output='screen',
            parameters=[{
                'robot_description': robot_description,
                'config_file': config,
                'publish_clock': True,
                'formulation': formulation,
                'use_sim_time': use_sim_time,
            }],
        ),
        Node(
            package='rviz2',
            executable='rviz2',
            name='rviz2',
            arguments=['-d', PathJoinSubstitution([share, 'rviz', 'jointsim.rviz'])],
            parameters=[{'use_sim_time': use_sim_time}],
            condition=IfCondition(rviz),
            output='log',
        ),
        Node(
            package='jointsim_ros',
            executable='jointsim_view',
            name='jointsim_view',
            output='screen',
            condition=IfCondition(view),
        ),
    ])
