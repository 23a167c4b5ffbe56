"""
Launch the bundled rover driving among boxes on its lidar: jointsim_node, its controller, views.

    ros2 launch jointsim_ros rover.launch.py
    ros2 launch jointsim_ros rover.launch.py rviz:=false view:=true   # the browser view only
    ros2 launch jointsim_ros rover.launch.py formulation:=tree        # exact joints (docs/tree.md)

The node runs urdf/jointsim_rover.urdf.xacro (through xacro) with config/jointsim_rover.yaml:
four wheels on 12 V DC drives, a 2-D lidar publishing its LaserScan on lidar/scan, and an arena
of walls and boxes.  jointsim_rover_controller reads only that scan and sends the wheels'
voltages on joint_voltages, driving ahead and steering away from what the lidar sees
(docs/sensors.md, "The rover demo").  rviz2 follows the rover and shows the scan (best effort,
as the node publishes it), the arena and the contacts; the browser view draws the scan too.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import Command, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    """Return the launch description: arguments, the node, the controller, rviz2, the view."""
    share = FindPackageShare('jointsim_ros')
    robot = PathJoinSubstitution([share, 'urdf', 'jointsim_rover.urdf.xacro'])
    config = PathJoinSubstitution([share, 'config', 'jointsim_rover.yaml'])
    rviz = LaunchConfiguration('rviz')
    view = LaunchConfiguration('view')
    use_sim_time = LaunchConfiguration('use_sim_time')
    # a string even when empty (launch_ros reads a bare substitution as YAML)
    formulation = ParameterValue(LaunchConfiguration('formulation'), value_type=str)
    robot_description = ParameterValue(Command(['xacro ', robot]), value_type=str)

    return LaunchDescription([
        DeclareLaunchArgument(
            'formulation', default_value='',
            description="Replaces the config's solver.formulation: maximal or tree (exact "
                        "joints in generalized coordinates, docs/tree.md); empty: the config's."),
        DeclareLaunchArgument(
            'rviz', default_value='true',
            description='Start rviz2 with rviz/jointsim_rover.rviz (RobotModel, TF, the '
                        'arena, contacts, the lidar scan, following the rover).'),
        DeclareLaunchArgument(
            'view', default_value='false',
            description='Start jointsim_view, the browser view (viser), which draws the scan '
                        'too: it prints its URL.'),
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
            package='jointsim_ros',
            executable='jointsim_rover_controller',
            name='jointsim_rover_controller',
            output='screen',
            parameters=[{'use_sim_time': use_sim_time}],
        ),
        Node(
            package='rviz2',
            executable='rviz2',
            name='rviz2',
            arguments=['-d', PathJoinSubstitution([share, 'rviz', 'jointsim_rover.rviz'])],
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
