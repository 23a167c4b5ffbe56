"""
Run jointsim_node in a subprocess on a ROS domain of its own and talk to it over real DDS.

- Domains: each test claims a ROS_DOMAIN_ID in 1..101 with an exclusive lock file in the
  temporary directory, so concurrent suites on one host (CI, a developer, two work trees) never
  share a domain; the lock is held until the test releases it.
- Environment: the child gets this process's full environment (the ROS wheels' bootstrapper
  needs it) plus ROS_DOMAIN_ID, ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST,
  FASTDDS_BUILTIN_TRANSPORTS=UDPv4 and FASTDDS_DEFAULT_PROFILES_FILE=config/fastdds_profile.xml
  (fast discovery); this process uses the same settings for its own participants.
- The test side is real rclpy with a context of its own (``rclpy.init(context=...,
  domain_id=...)``).  Waits are generous (first messages up to 15 s); no test asserts a timing.
- The node is always stopped: SIGINT, then SIGKILL if it has not ended after 5 s.
"""
import contextlib
import fcntl
import itertools
import math
import os
from pathlib import Path
import signal
import subprocess
import sys
import tempfile
import time

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
import yaml

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
FASTDDS_PROFILE = PACKAGE_ROOT / 'config' / 'fastdds_profile.xml'
ROS_ENVIRONMENT = {
    'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
    'FASTDDS_BUILTIN_TRANSPORTS': 'UDPv4',
    'FASTDDS_DEFAULT_PROFILES_FILE': str(FASTDDS_PROFILE),
}
#: Longest wait for the node to print 'ready' (the engine may compile on a cold cache), s.
START_TIMEOUT = 120.0
#: Longest wait for a first message or a condition, s.
WAIT = 15.0
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                     reliability=ReliabilityPolicy.RELIABLE)
# /tf_static as tf2's static listener reads it: a reader's history is shared by all writers, so
# depth 1 would keep only one of several nodes' latched messages.
STATIC_TF = QoSProfile(depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                       reliability=ReliabilityPolicy.RELIABLE)

# This process's own participants use the same discovery settings as the nodes.
os.environ.update(ROS_ENVIRONMENT)

_DOMAIN_LOCKS = Path(tempfile.gettempdir()) / 'jointsim_ros_domains'
_claims = itertools.count()


def claim_domain():
    """
    Return (domain id, lock file) for a ROS domain no other test on this host is using.

    Close the lock file to release the domain.
    """
    _DOMAIN_LOCKS.mkdir(exist_ok=True)
    start = (os.getpid() * 31 + next(_claims) * 7) % 101
    for offset in range(101):
        domain = 1 + (start + offset) % 101
        lock = open(_DOMAIN_LOCKS / f'domain_{domain}.lock', 'w')
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            continue
        return domain, lock
    raise RuntimeError('every ROS domain in 1..101 is in use by other tests on this host')


def _parameter_text(value):
    if isinstance(value, bool):
        return 'true' if value else 'false'
    return str(value)


class NodeProcess:
    """
    One jointsim_node process.

    Args:
        domain: ROS_DOMAIN_ID.
        log_path: file that receives the node's stdout and stderr.
        parameters: dict name -> value, passed as ``-p name:=value``.
        params_file: optional ROS parameter YAML file (``--params-file``).
        namespace: optional node namespace (``-r __ns:=...``).
    """

    def __init__(self, domain, log_path, parameters=None, params_file=None, namespace=None):
        args = [sys.executable, '-m', 'jointsim_ros.ros.node', '--ros-args']
        if namespace:
            args += ['-r', f'__ns:={namespace}']
        if params_file:
            args += ['--params-file', str(params_file)]
        for name, value in (parameters or {}).items():
            args += ['-p', f'{name}:={_parameter_text(value)}']
        env = dict(os.environ, ROS_DOMAIN_ID=str(domain), **ROS_ENVIRONMENT)
        self.log_path = Path(log_path)
        self._log = open(self.log_path, 'w')
        self.process = subprocess.Popen(args, cwd=PACKAGE_ROOT, env=env, stdout=self._log,
                                        stderr=subprocess.STDOUT)

    def output(self):
        """Return everything the node has printed so far."""
        return self.log_path.read_text(errors='replace')

    def wait_ready(self, timeout=START_TIMEOUT):
        """Wait until the node logs 'ready'; fail with its output if it ends first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if 'ready:' in self.output():
                return
            if self.process.poll() is not None:
                raise AssertionError(f'jointsim_node ended with status {self.process.returncode} '
                                     f'before it was ready:\n{self.output()}')
            time.sleep(0.05)
        raise AssertionError(f'jointsim_node not ready after {timeout} s:\n{self.output()}')

    def wait_exit(self, timeout=START_TIMEOUT):
        """Wait for the process to end by itself; return its exit status."""
        return self.process.wait(timeout=timeout)

    def stop(self):
        """End the node: SIGINT, then SIGKILL after 5 s.  Return its exit status."""
        stop_process(self.process)
        self._log.close()
        return self.process.returncode


class RosClient:
    """An rclpy node of the test, in a context of its own on the given domain."""

    def __init__(self, domain, name='jointsim_test_client'):
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._clients = {}

    def subscribe(self, msg_type, topic, qos=10):
        """Subscribe; return the list that receives every message."""
        received = []
        self.node.create_subscription(msg_type, topic, received.append, qos)
        return received

    def publisher(self, msg_type, topic, qos=10):
        """Return a publisher."""
        return self.node.create_publisher(msg_type, topic, qos)

    def spin_for(self, seconds):
        """Process callbacks for a while."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.02)

    def wait_for(self, condition, timeout=WAIT, every=None):
        """
        Spin until ``condition()`` is true; return whether it became true in time.

        Args:
            condition: callable returning a truth value.
            timeout: s.
            every: optional (period s, callable) called periodically while waiting, e.g. to
                keep publishing a command.
        """
        deadline = time.monotonic() + timeout
        next_call = 0.0
        while time.monotonic() < deadline:
            if every is not None and time.monotonic() >= next_call:
                every[1]()
                next_call = time.monotonic() + every[0]
            if condition():
                return True
            self.executor.spin_once(timeout_sec=0.02)
        return bool(condition())

    def call(self, srv_type, name, request=None, timeout=WAIT):
        """
        Call a service and return the response (fails the test if it does not come).

        One client per service, kept: ``service_is_ready`` says the request can reach the
        service, not that its answer can reach this client yet, and a request sent on a client
        made a moment before once went unanswered on a loaded CI machine (``no response from
        /robot/reset``).  So a new client waits a quarter second after it is ready.
        """
        key = (srv_type, name)
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = self.node.create_client(srv_type, name)
            assert self.wait_for(client.service_is_ready, timeout), f'no service {name}'
            self.spin_for(0.25)
        assert self.wait_for(client.service_is_ready, timeout), f'no service {name}'
        future = client.call_async(request or srv_type.Request())
        assert self.wait_for(future.done, timeout), f'no response from {name}'
        return future.result()

    def close(self):
        """Destroy the node and shut the context down."""
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def stop_process(process, timeout=5.0):
    """End a child process: SIGINT, then SIGKILL after ``timeout`` s; return its status."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


def write_params_file(path, parameters, node_name='jointsim_node'):
    """Write a ROS parameter file (``node: ros__parameters:`` layout); return its path."""
    path = Path(path)
    path.write_text(yaml.safe_dump({node_name: {'ros__parameters': parameters}}))
    return path


@contextlib.contextmanager
def domain():
    """Claim a ROS domain for the duration of the block; yield its id."""
    domain_id, lock = claim_domain()
    try:
        yield domain_id
    finally:
        lock.close()


@contextlib.contextmanager
def running_node(domain_id, log_path, **kwargs):
    """Start a node, wait until it is ready, yield it, and always stop it."""
    node = NodeProcess(domain_id, log_path, **kwargs)
    try:
        node.wait_ready()
        yield node
    finally:
        node.stop()


@contextlib.contextmanager
def view_in_process(domain_id, port):
    """
    Run jointsim_view's node in this process, in its own context; yield (view, executor).

    Its server on the first free port from ``port``; the view, its server and its context are
    always closed.
    """
    from jointsim_ros.view.drawing import free_port
    from jointsim_ros.view.node import ViewNode
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain_id)
    view = ViewNode(announce=lambda text: None, context=context,
                    parameter_overrides=[rclpy.parameter.Parameter(
                        'port', value=free_port(port))])
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(view)
    try:
        yield view, executor
    finally:
        view.scene.close()
        view.destroy_node()
        rclpy.try_shutdown(context=context)


def latest(messages):
    """Return the last message received, or None."""
    return messages[-1] if messages else None


def stamp_seconds(stamp):
    """Return a builtin_interfaces/Time in seconds."""
    return stamp.sec + stamp.nanosec * 1e-9


def finite(values):
    """Return whether every value is finite."""
    return all(math.isfinite(v) for v in values)
