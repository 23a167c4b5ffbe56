"""Packaging for jointsim_ros (ament_python; built by colcon or installed with pip)."""

from glob import glob
import os

from setuptools import find_packages
from setuptools import setup

package_name = 'jointsim_ros'


def files_in(pattern):
    """Return the regular files matching a glob pattern (directories are left out)."""
    return sorted(path for path in glob(pattern) if os.path.isfile(path))


setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        ('share/' + package_name + '/launch', files_in('launch/*.launch.py')),
        ('share/' + package_name + '/urdf', files_in('urdf/*')),
        ('share/' + package_name + '/config',
         files_in('config/*.yaml') + files_in('config/*.xml') + files_in('config/*.xacro')),
        ('share/' + package_name + '/rviz', files_in('rviz/*.rviz')),
    ],
    install_requires=['setuptools'],
    zip_safe=True,
    maintainer='jointsim_ros developers',
    maintainer_email='jointsim@example.com',
    description='Rigid-body robot simulator for ROS 2 with a numpy + numba physics core.',
    license='Apache-2.0',
    # colcon test runs pytest (rather than unittest) only when pytest is a test dependency.
    extras_require={
        'test': [
            'pytest',
        ],
        # jointsim_sweep runs its trials on Ray (docs/sweep.md); nothing else needs it
        'sweep': [
            'ray>=2.40',
        ],
        # jointsim_view and `jointsim_headless --view`, the browser view (docs/view.md)
        'view': [
            'viser>=1.0',
        ],
    },
    entry_points={
        'console_scripts': [
            'jointsim_headless = jointsim_ros.tools.headless:main',
            'jointsim_node = jointsim_ros.ros.node:main',
            'jointsim_example_controller = jointsim_ros.tools.example_controller:main',
            'jointsim_humanoid_controller = jointsim_ros.tools.humanoid_controller:main',
            'jointsim_rover_controller = jointsim_ros.tools.rover_controller:main',
            'jointsim_inverse_dynamics = jointsim_ros.tools.inverse_dynamics:main',
            'jointsim_compare_formulations = jointsim_ros.tools.compare_formulations:main',
            'jointsim_precompile = jointsim_ros.tools.precompile:main',
            'jointsim_sweep = jointsim_ros.tools.sweep:main',
            'jointsim_view = jointsim_ros.view.node:main',
        ],
    },
)
